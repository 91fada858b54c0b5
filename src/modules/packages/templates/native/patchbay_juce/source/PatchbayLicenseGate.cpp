namespace patchbay::juce_support
{
    LicenseOptions LicenseGate::defaultOptions()
    {
        LicenseOptions options;
       #ifdef JucePlugin_VersionString
        options.appVersion = JucePlugin_VersionString;
       #endif
        return options;
    }

    LicenseGate::LicenseGate (LicenseOptions options, bool validateAtStart)
        : juce::Thread ("Patchbay licensing"),
          transport_ (std::make_shared<JuceUrlTransport>()),
          client_ (std::make_unique<LicenseClient> (transport_, std::move (options)))
    {
        status_ = client_->checkOffline();
        licensed_.store (status_.licensed);
        startThread();
        if (validateAtStart)
            validate();
    }

    LicenseGate::~LicenseGate()
    {
        removeAllChangeListeners();
        signalThreadShouldExit();
        transport_->cancel();
        wake_.signal();
        stopThread (4000);
    }

    LicenseStatus LicenseGate::status() const
    {
        const std::lock_guard<std::mutex> guard (lock_);
        return status_;
    }

    void LicenseGate::activate (const juce::String& serial)
    {
        const std::string text = serial.toStdString();
        enqueue ([text] (LicenseClient& client) { return client.activate (text); });
    }

    void LicenseGate::deactivate()
    {
        enqueue ([] (LicenseClient& client) { return client.deactivate(); });
    }

    void LicenseGate::validate()
    {
        enqueue ([] (LicenseClient& client) { return client.validate(); });
    }

    bool LicenseGate::isBusy() const
    {
        const std::lock_guard<std::mutex> guard (lock_);
        return running_ || ! jobs_.empty();
    }

    bool LicenseGate::waitUntilIdle (int timeoutMs)
    {
        return idle_.wait (timeoutMs);
    }

    void LicenseGate::enqueue (std::function<LicenseStatus (LicenseClient&)> job)
    {
        {
            const std::lock_guard<std::mutex> guard (lock_);
            jobs_.push_back (std::move (job));
            idle_.reset();
        }
        wake_.signal();
    }

    void LicenseGate::run()
    {
        while (! threadShouldExit())
        {
            std::function<LicenseStatus (LicenseClient&)> job;
            {
                const std::lock_guard<std::mutex> guard (lock_);
                if (! jobs_.empty())
                {
                    job = std::move (jobs_.front());
                    jobs_.pop_front();
                    running_ = true;
                }
                else
                {
                    idle_.signal();
                }
            }

            if (! job)
            {
                wake_.wait (1000);
                continue;
            }

            const LicenseStatus result = job (*client_);
            {
                const std::lock_guard<std::mutex> guard (lock_);
                status_ = result;
                running_ = false;
                licensed_.store (result.licensed);
            }
            if (! threadShouldExit())
                sendChangeMessage();
        }
    }
}
