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
          // The verifier's tolerance for a wrong clock (it refuses a token at exp + skew, not at exp).
          clockSkewSeconds_ (options.clockSkewSeconds < 0 ? 0 : options.clockSkewSeconds)
    {
        client_ = std::make_unique<LicenseClient> (transport_, std::move (options));
        publish (client_->checkOffline());
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

    bool LicenseGate::isLicensed() const
    {
        return licensed_.load (std::memory_order_relaxed) && client_->now() < lockedFrom_.load (std::memory_order_relaxed);
    }

    LicenseStatus LicenseGate::status() const
    {
        LicenseStatus status;
        {
            const std::lock_guard<std::mutex> guard (lock_);
            status = status_;
        }
        // What the lock says: the last answer's token may have run out since, with no call made in between.
        if (status.licensed && client_->now() >= lockedFrom_.load (std::memory_order_relaxed))
        {
            status.licensed = false;
            status.code = tokenErrorCode (TokenError::expired);
            status.detail = tokenErrorText (TokenError::expired);
        }
        return status;
    }

    void LicenseGate::publish (const LicenseStatus& result)
    {
        const std::lock_guard<std::mutex> guard (lock_);
        status_ = result;
        lockedFrom_.store (result.licensed ? result.expiresAt + clockSkewSeconds_ : 0, std::memory_order_relaxed);
        licensed_.store (result.licensed, std::memory_order_relaxed);
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

    MachineRequest LicenseGate::machineRequest (const juce::String& serial, const juce::String& machineName)
    {
        return client_->machineRequest (serial.toStdString(), machineName.toStdString());
    }

    void LicenseGate::loadLicenseFile (const juce::String& content)
    {
        const std::string text = content.toStdString();
        enqueue ([text] (LicenseClient& client) { return client.loadLicenseFile (text); });
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

            publish (job (*client_));
            {
                const std::lock_guard<std::mutex> guard (lock_);
                running_ = false;
            }
            if (! threadShouldExit())
                sendChangeMessage();
        }
    }
}
