#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace patchbay
{
    /** What the plugin keeps between runs. */
    struct StoredLicense
    {
        std::string serial;
        /** The newest license token; "" after the server said the license is no longer valid (the serial is kept). */
        std::string token;
        /** Nonces of the machine requests written for offline activation and not answered yet, oldest first. */
        std::vector<std::string> requests;
    };

    /**
     * The license file, one per product and user: <user data>/Patchbay/<appId>/license.dat.
     *
     * The content is sealed with crypto_secretbox (XSalsa20-Poly1305, a random nonce per write) under a key derived
     * from the appId, the product key and the machine id. That makes it tamper-evident and bound to this computer
     * (a file edited by hand, or copied from another machine, does not open), but it is NOT secret: the key material
     * ships in the plugin binary. Nothing in the file needs to be secret: the token is signed by the server and is
     * worthless on another machine; the sealing only keeps casual edits out. Writes go to a temporary file that is
     * then renamed, so a crash never leaves half a license.
     */
    class LicenseStore
    {
    public:
        enum class Load { ok, missing, tampered };

        LicenseStore (std::filesystem::path file, const std::string& appId, const std::string& productKey, const std::string& machineId);

        /** <user data>/Patchbay/<appId>/license.dat (empty when the user data folder is unknown). */
        static std::filesystem::path defaultFile (const std::string& appId);

        const std::filesystem::path& file() const noexcept { return file_; }

        Load load (StoredLicense& out) const;
        bool save (const StoredLicense& license) const;
        void clear() const;

    private:
        std::filesystem::path file_;
        std::string key_;
    };
}
