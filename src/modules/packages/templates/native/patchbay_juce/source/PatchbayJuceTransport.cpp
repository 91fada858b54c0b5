namespace patchbay::juce_support
{
    HttpResponse JuceUrlTransport::send (const std::string& method,
                                         const std::string& url,
                                         const std::vector<HttpHeader>& headers,
                                         const std::string& body,
                                         int timeoutMs)
    {
        constexpr int maxAnswer = 1024 * 1024;
        HttpResponse response;
        const bool post = method == "POST";

        juce::URL target (juce::String::fromUTF8 (url.data(), static_cast<int> (url.size())));
        if (post)
            target = target.withPOSTData (juce::MemoryBlock (body.data(), body.size()));

        juce::String headerText;
        for (const auto& header : headers)
            headerText << juce::String::fromUTF8 (header.name.c_str()) << ": " << juce::String::fromUTF8 (header.value.c_str()) << "\r\n";

        juce::WebInputStream stream (target, post);
        stream.withExtraHeaders (headerText).withConnectionTimeout (timeoutMs).withNumRedirectsToFollow (0);

        {
            const std::lock_guard<std::mutex> guard (lock_);
            if (cancelled_)
            {
                response.error = "cancelled";
                return response;
            }
            active_ = &stream;
        }

        const bool connected = stream.connect (nullptr) && ! stream.isError();
        if (connected)
        {
            response.status = stream.getStatusCode();
            juce::MemoryOutputStream out;
            out.writeFromInputStream (stream, maxAnswer);
            response.body.assign (static_cast<const char*> (out.getData()), out.getDataSize());
        }

        bool cancelled = false;
        {
            const std::lock_guard<std::mutex> guard (lock_);
            active_ = nullptr;
            cancelled = cancelled_;
        }

        if (cancelled || ! connected || response.status == 0)
        {
            response = HttpResponse();
            response.error = cancelled ? "cancelled" : "no connection to " + target.getDomain().toStdString();
        }
        return response;
    }

    void JuceUrlTransport::cancel()
    {
        const std::lock_guard<std::mutex> guard (lock_);
        cancelled_ = true;
        if (active_ != nullptr)
            active_->cancel();
    }
}
