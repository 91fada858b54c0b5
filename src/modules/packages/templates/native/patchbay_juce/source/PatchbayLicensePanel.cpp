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

            offline_.onClick = [this] { chooseOffline(); };
            addAndMakeVisible (offline_);
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
        {
            deactivate_.setBounds (buttons.removeFromLeft (200));
            buttons.removeFromLeft (8);
            offline_.setBounds (buttons.removeFromLeft (170));
        }
        if (experienceShowsStore (mode_))
            buy_.setBounds (buttons.removeFromRight (110));
        area.removeFromBottom (8);
        state_.setBounds (area);
    }

    void LicensePanel::chooseOffline()
    {
        juce::PopupMenu menu;
        menu.addItem (1, "Save a machine request file...");
        menu.addItem (2, "Load a license file...");
        menu.showMenuAsync (juce::PopupMenu::Options().withTargetComponent (&offline_),
                            [safe = juce::Component::SafePointer<LicensePanel> (this)] (int choice) {
                                if (safe == nullptr)
                                    return;
                                if (choice == 1)
                                    safe->saveMachineRequest();
                                else if (choice == 2)
                                    safe->loadLicenseFile();
                            });
    }

    void LicensePanel::saveMachineRequest()
    {
        if (serial_.getText().trim().isEmpty() && gate_.status().serial.empty())
        {
            state_.setText ("Enter your serial number first, then save the request file.", juce::dontSendNotification);
            return;
        }
        const auto suggested = juce::File::getSpecialLocation (juce::File::userDesktopDirectory)
                                   .getChildFile (juce::String ("machine-request-") + config::appId + ".patchbay-request");
        chooser_ = std::make_unique<juce::FileChooser> ("Save the machine request file", suggested, "*.patchbay-request");
        const int flags = juce::FileBrowserComponent::saveMode | juce::FileBrowserComponent::canSelectFiles
                        | juce::FileBrowserComponent::warnAboutOverwriting;
        // The request (and its nonce) is made once the user chose where to save it, so a cancelled dialog leaves none.
        chooser_->launchAsync (flags, [this] (const juce::FileChooser& chooser) {
            const juce::File file = chooser.getResult();
            if (file == juce::File())
                return;
            // A call still running on the gate's thread holds the client (up to the network timeout): never wait for it
            // on the message thread.
            if (gate_.isBusy())
            {
                state_.setText ("Still busy with the last request: save the request file again in a moment.", juce::dontSendNotification);
                return;
            }
            const MachineRequest request = gate_.machineRequest (serial_.getText().trim(), juce::SystemStats::getComputerName());
            if (request.status.code != "REQUEST_READY")
                state_.setText (juce::String::fromUTF8 (request.status.detail.c_str()), juce::dontSendNotification);
            else if (file.replaceWithText (juce::String::fromUTF8 (request.content.c_str())))
                state_.setText ("Request file saved. Upload it in your account on a computer with internet, then load the license file you get there.",
                                juce::dontSendNotification);
            else
                state_.setText ("The request file could not be saved there: choose another folder.", juce::dontSendNotification);
        });
    }

    void LicensePanel::loadLicenseFile()
    {
        chooser_ = std::make_unique<juce::FileChooser> ("Load the license file", juce::File::getSpecialLocation (juce::File::userDesktopDirectory), "*.patchbay-license");
        chooser_->launchAsync (juce::FileBrowserComponent::openMode | juce::FileBrowserComponent::canSelectFiles, [this] (const juce::FileChooser& chooser) {
            const juce::File file = chooser.getResult();
            if (file == juce::File())
                return;
            state_.setText ("Checking the license file...", juce::dontSendNotification);
            // The gate answers on its thread; the result comes back through changeListenerCallback.
            gate_.loadLicenseFile (file.getSize() <= 64 * 1024 ? file.loadFileAsString() : juce::String());
        });
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
