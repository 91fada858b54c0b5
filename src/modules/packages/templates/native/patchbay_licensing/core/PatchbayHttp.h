#pragma once

#include <string>
#include <vector>

namespace patchbay
{
    struct HttpHeader
    {
        std::string name;
        std::string value;
    };

    struct HttpResponse
    {
        /** The HTTP status, or 0 when no answer arrived (no network, DNS, TLS, timeout). */
        int status = 0;
        std::string body;
        /** Why there is no answer, for logs and the UI (status 0 only). */
        std::string error;
    };

    /**
     * How the licensing client reaches the server. The core ships a libcurl implementation
     * (PatchbayCurlTransport.h) and the JUCE module one on juce::URL; a host with its own HTTP stack implements
     * this one call. Implementations must verify TLS certificates, must not follow redirects, and are called from
     * whatever thread calls LicenseClient (never from the audio thread).
     */
    class HttpTransport
    {
    public:
        virtual ~HttpTransport() = default;

        /** `method` is "GET" or "POST"; `body` is empty for GET. */
        virtual HttpResponse send (const std::string& method,
                                   const std::string& url,
                                   const std::vector<HttpHeader>& headers,
                                   const std::string& body,
                                   int timeoutMs) = 0;
    };
}
