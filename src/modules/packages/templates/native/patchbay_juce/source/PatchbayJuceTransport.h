#pragma once

namespace patchbay::juce_support
{
    /**
     * HttpTransport on juce::WebInputStream (WinINet on Windows, NSURLSession on macOS, libcurl on Linux), so the
     * plugin needs no HTTP library of its own. TLS is verified by the platform; redirects are not followed.
     * cancel() aborts a request in flight (and every later one), so a plugin can close without waiting out a timeout.
     */
    class JuceUrlTransport final : public HttpTransport
    {
    public:
        HttpResponse send (const std::string& method,
                           const std::string& url,
                           const std::vector<HttpHeader>& headers,
                           const std::string& body,
                           int timeoutMs) override;

        void cancel();

    private:
        std::mutex lock_;
        juce::WebInputStream* active_ = nullptr;
        bool cancelled_ = false;
    };
}
