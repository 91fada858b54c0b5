namespace patchbay::juce_support
{
    LicensePanel::LicensePanel (LicenseGate& gate)
        : gate_ (gate), mode_ (configuredExperience())
    {
        title_.setText (juce::String::fromUTF8 (config::productName), juce::dontSendNotification);
        title_.setFont (juce::Font (20.0f, juce::Font::bold));
        title_.setJustificationType (juce::Justification::centredLeft);
        addAndMakeVisible (title_);

        state_.setJustificationType (juce::Justification::topLeft);
        state_.setMinimumHorizontalScale (1.0f);
        addAndMakeVisible (state_);

        if (experienceValidates (mode_))
        {
            serial_.setTextToShowWhenEmpty ("Serial number", juce::Colours::grey);
            serial_.onReturnKey = [this] { activate_.triggerClick(); };
            addAndMakeVisible (serial_);

            activate_.onClick = [this] {
                activate_.setEnabled (false);
                state_.setText ("Activating...", juce::dontSendNotification);
                gate_.activate (serial_.getText().trim());
            };
            addAndMakeVisible (activate_);

            deactivate_.onClick = [this] {
                deactivate_.setEnabled (false);
                state_.setText ("Deactivating...", juce::dontSendNotification);
                gate_.deactivate();
            };
            addAndMakeVisible (deactivate_);
        }

        if (experienceShowsStore (mode_))
        {
            buy_.onClick = [] { juce::URL (juce::String::fromUTF8 (config::storefrontUrl)).launchInDefaultBrowser(); };
            addAndMakeVisible (buy_);
        }

        gate_.addChangeListener (this);
        showStatus (gate_.status());
        setSize (config::uiWidth, config::uiHeight);
    }

    LicensePanel::~LicensePanel()
    {
        gate_.removeChangeListener (this);
    }

    void LicensePanel::paint (juce::Graphics& g)
    {
        g.fillAll (getLookAndFeel().findColour (juce::ResizableWindow::backgroundColourId));
    }

    void LicensePanel::resized()
    {
        auto area = getLocalBounds().reduced (16);
        title_.setBounds (area.removeFromTop (32));
        area.removeFromTop (8);

        if (experienceValidates (mode_))
        {
            auto row = area.removeFromTop (28);
            activate_.setBounds (row.removeFromRight (110));
            row.removeFromRight (8);
            serial_.setBounds (row);
            area.removeFromTop (8);
        }

        auto buttons = area.removeFromBottom (28);
        if (experienceValidates (mode_))
            deactivate_.setBounds (buttons.removeFromLeft (200));
        if (experienceShowsStore (mode_))
            buy_.setBounds (buttons.removeFromRight (110));
        area.removeFromBottom (8);
        state_.setBounds (area);
    }

    void LicensePanel::changeListenerCallback (juce::ChangeBroadcaster*)
    {
        showStatus (gate_.status());
    }

    void LicensePanel::showStatus (const LicenseStatus& status)
    {
        activate_.setEnabled (true);
        deactivate_.setEnabled (status.licensed || ! status.serial.empty());
        if (! status.serial.empty() && serial_.isEmpty())
            serial_.setText (juce::String::fromUTF8 (status.serial.c_str()), false);

        if (! experienceValidates (mode_))
        {
            state_.setText (experienceShowsStore (mode_) ? "Get your license in the store." : juce::String(), juce::dontSendNotification);
            return;
        }

        juce::String text = juce::String::fromUTF8 (status.detail.c_str());
        if (status.licensed && status.expiresAt > 0)
        {
            const juce::Time until (status.expiresAt * 1000);
            text << "\nWorks offline until " << until.toString (true, true, false) << " (" << config::offlineGraceDays
                 << " days after the last check with the server).";
        }
        if (text.isEmpty())
            text = status.licensed ? "Licensed." : "Not activated.";
        state_.setText (text, juce::dontSendNotification);
    }
}
