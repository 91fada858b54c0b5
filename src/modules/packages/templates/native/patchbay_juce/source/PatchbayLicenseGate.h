#pragma once

namespace patchbay::juce_support
{
    /**
     * The license state of one plugin instance, for the processor and the editor.
     *
     * The constructor decides from the stored token alone (no network, a few microseconds of Ed25519), so the
     * plugin knows at once whether it runs; it then validates in the background (which refreshes the token and
     * slides the offline grace forward). isLicensed() is one atomic load: safe on the audio thread.
     * activate(), deactivate() and validate() run on the gate's own thread; listeners (juce::ChangeListener) hear
     * about every new status on the message thread. Destroying the gate cancels a request in flight.
     */
    class LicenseGate : public juce::ChangeBroadcaster, private juce::Thread
    {
    public:
        explicit LicenseGate (LicenseOptions options = defaultOptions(), bool validateAtStart = true);
        ~LicenseGate() override;

        /** The options every plugin wants: the plugin's version (JucePlugin_VersionString) when it is defined. */
        static LicenseOptions defaultOptions();

        bool isLicensed() const noexcept { return licensed_.load (std::memory_order_relaxed); }
        LicenseStatus status() const;

        void activate (const juce::String& serial);
        void deactivate();
        void validate();

        /** True while a call is queued or running. */
        bool isBusy() const;
        /** For tools and tests without a message loop: waits until no call is queued or running. */
        bool waitUntilIdle (int timeoutMs);

        LicenseClient& client() noexcept { return *client_; }

    private:
        void run() override;
        void enqueue (std::function<LicenseStatus (LicenseClient&)> job);

        std::shared_ptr<JuceUrlTransport> transport_;
        std::unique_ptr<LicenseClient> client_;
        std::atomic<bool> licensed_ { false };

        mutable std::mutex lock_;
        LicenseStatus status_;
        std::deque<std::function<LicenseStatus (LicenseClient&)>> jobs_;
        bool running_ = false;
        juce::WaitableEvent wake_;
        juce::WaitableEvent idle_ { true };
    };
}
