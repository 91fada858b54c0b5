#pragma once

namespace patchbay::juce_support
{
    /**
     * The license state of one plugin instance, for the processor and the editor.
     *
     * The constructor decides from the stored token alone (no network, a few microseconds of Ed25519), so the
     * plugin knows at once whether it runs; it then validates in the background (which refreshes the token and
     * slides the offline grace forward). isLicensed() reads two atomics and the clock: safe on the audio thread.
     * Both isLicensed() and status() follow the clock: once the offline grace of the last token ends, the gate is
     * locked and its status says TOKEN_EXPIRED, even when no call has been made since (a plugin left running
     * offline).
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

        bool isLicensed() const;
        LicenseStatus status() const;

        void activate (const juce::String& serial);
        void deactivate();
        void validate();

        /**
         * Offline activation, step 1: the machine request file for `serial` ("" takes the stored serial), naming this
         * computer `machineName` in the buyer's portal. No network: it runs on the calling thread, at once unless a
         * queued call is running (it waits for that call, which holds the client); check isBusy() first on the message
         * thread.
         */
        MachineRequest machineRequest (const juce::String& serial, const juce::String& machineName = {});
        /** Offline activation, step 2: loads a license file's content on the gate's thread; listeners hear the result. */
        void loadLicenseFile (const juce::String& content);

        /** True while a call is queued or running. */
        bool isBusy() const;
        /** For tools and tests without a message loop: waits until no call is queued or running. */
        bool waitUntilIdle (int timeoutMs);

        LicenseClient& client() noexcept { return *client_; }

    private:
        void run() override;
        void publish (const LicenseStatus& result);
        void enqueue (std::function<LicenseStatus (LicenseClient&)> job);

        std::shared_ptr<JuceUrlTransport> transport_;
        std::unique_ptr<LicenseClient> client_;
        std::atomic<bool> licensed_ { false };
        /** The first moment (Unix seconds, the client's clock) at which the stored token no longer verifies. */
        std::atomic<std::int64_t> lockedFrom_ { 0 };
        std::int64_t clockSkewSeconds_ = 0;

        mutable std::mutex lock_;
        LicenseStatus status_;
        std::deque<std::function<LicenseStatus (LicenseClient&)>> jobs_;
        bool running_ = false;
        juce::WaitableEvent wake_;
        juce::WaitableEvent idle_ { true };
    };
}
