#pragma once

namespace patchbay::juce_support
{
    /**
     * The license panel, config::uiWidth x config::uiHeight, following config::experienceMode:
     *  - validation-only: serial field, Activate, "Deactivate this computer", "Offline activation..." (save a machine
     *    request file, load a license file), the license state and its offline grace;
     *  - storefront-only: the product and a Buy button (no license calls);
     *  - storefront-validation: both.
     * It only talks to the LicenseGate, so the processor sees every change at once.
     */
    class LicensePanel : public juce::Component, private juce::ChangeListener
    {
    public:
        explicit LicensePanel (LicenseGate& gate);
        ~LicensePanel() override;

        void paint (juce::Graphics& g) override;
        void resized() override;

    private:
        void changeListenerCallback (juce::ChangeBroadcaster* source) override;
        void showStatus (const LicenseStatus& status);
        void chooseOffline();
        void saveMachineRequest();
        void loadLicenseFile();

        LicenseGate& gate_;
        const ExperienceMode mode_;
        juce::Label title_;
        juce::Label state_;
        juce::TextEditor serial_;
        juce::TextButton activate_ { "Activate" };
        juce::TextButton deactivate_ { "Deactivate this computer" };
        juce::TextButton buy_ { "Buy" };
        juce::TextButton offline_ { "Offline activation..." };
        std::unique_ptr<juce::FileChooser> chooser_;

        JUCE_DECLARE_NON_COPYABLE_WITH_LEAK_DETECTOR (LicensePanel)
    };
}
