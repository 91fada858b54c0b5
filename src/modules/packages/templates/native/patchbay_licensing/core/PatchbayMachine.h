#pragma once

#include <filesystem>
#include <string>

namespace patchbay
{
    /** Initialises libsodium once (thread-safe); false when it cannot run, and then every check fails closed. */
    bool ensureSodium();

    /** "windows", "macos", "linux" or "other": sent as `platform` on activation. */
    const char* platformName();

    /**
     * The per-user application data folder: %APPDATA% on Windows, ~/Library/Application Support on macOS,
     * $XDG_CONFIG_HOME or ~/.config on Linux. Empty when it cannot be found.
     */
    std::filesystem::path userDataDirectory();

    /**
     * A raw identifier of this computer: IOPlatformUUID on macOS, the MachineGuid of
     * HKLM\SOFTWARE\Microsoft\Cryptography on Windows, /etc/machine-id (or /var/lib/dbus/machine-id) on Linux.
     * When none can be read, a random seed kept in the user data folder stands in. It never leaves the process
     * unhashed: only machineIdFor() is sent.
     */
    std::string hostIdentifier();

    /**
     * The machine id sent to the server and bound into license tokens: hex SHA-256 over a fixed label, the appId and
     * hostIdentifier(). Stable across runs and plugin updates; salted with the appId so two vendors (or two
     * products) never see the same id for one computer, and the raw hardware id cannot be read back from it.
     */
    std::string machineIdFor (const std::string& appId);
}
