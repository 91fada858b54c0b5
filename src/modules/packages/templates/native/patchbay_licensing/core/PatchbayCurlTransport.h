#pragma once

#include "PatchbayHttp.h"

// The libcurl transport is compiled when PATCHBAY_WITH_CURL is 1 (the default of the core's CMakeLists.txt).
// The JUCE module sets it to 0 and uses juce::URL instead.
#ifndef PATCHBAY_WITH_CURL
 #define PATCHBAY_WITH_CURL 0
#endif

#if PATCHBAY_WITH_CURL
namespace patchbay
{
    /** HttpTransport on libcurl (TLS verified, no redirects, answers capped at 1 MiB). */
    class CurlTransport final : public HttpTransport
    {
    public:
        CurlTransport();

        HttpResponse send (const std::string& method,
                           const std::string& url,
                           const std::vector<HttpHeader>& headers,
                           const std::string& body,
                           int timeoutMs) override;
    };
}
#endif
