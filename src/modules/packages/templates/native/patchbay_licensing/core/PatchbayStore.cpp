#include "PatchbayStore.h"

#include "PatchbayBase64.h"
#include "PatchbayJson.h"
#include "PatchbayMachine.h"

#include <sodium.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <system_error>
#include <vector>

namespace patchbay
{
    namespace
    {
        constexpr const char* magic = "PBL1";
        constexpr std::uintmax_t maxFile = 64 * 1024;

        void appendField (std::string& out, const std::string& field)
        {
            // Length-prefixed, so ("ab","c") and ("a","bc") derive different keys.
            out += std::to_string (field.size());
            out += ':';
            out += field;
        }
    }

    LicenseStore::LicenseStore (std::filesystem::path file, const std::string& appId, const std::string& productKey, const std::string& machineId)
        : file_ (std::move (file))
    {
        std::string material = "patchbay-store-v1";
        appendField (material, appId);
        appendField (material, productKey);
        appendField (material, machineId);
        unsigned char key[crypto_secretbox_KEYBYTES];
        if (ensureSodium())
        {
            crypto_generichash (key, sizeof (key), reinterpret_cast<const unsigned char*> (material.data()), material.size(), nullptr, 0);
            key_.assign (reinterpret_cast<const char*> (key), sizeof (key));
            sodium_memzero (key, sizeof (key));
        }
    }

    std::filesystem::path LicenseStore::defaultFile (const std::string& appId)
    {
        const auto dir = userDataDirectory();
        return dir.empty() ? dir : dir / "Patchbay" / appId / "license.dat";
    }

    LicenseStore::Load LicenseStore::load (StoredLicense& out) const
    {
        out = StoredLicense();
        std::error_code error;
        if (file_.empty() || ! std::filesystem::exists (file_, error))
            return Load::missing;
        if (key_.empty() || std::filesystem::file_size (file_, error) > maxFile || error)
            return Load::tampered;

        std::ifstream in (file_, std::ios::binary);
        const std::string text ((std::istreambuf_iterator<char> (in)), std::istreambuf_iterator<char>());
        const std::string prefix = std::string (magic) + ".";
        std::vector<unsigned char> sealed;
        if (text.rfind (prefix, 0) != 0)
            return Load::tampered;
        std::string encoded = text.substr (prefix.size());
        while (! encoded.empty() && (encoded.back() == '\n' || encoded.back() == '\r'))
            encoded.pop_back();
        if (! base64UrlDecode (encoded, sealed) || sealed.size() < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES)
            return Load::tampered;

        std::vector<unsigned char> plain (sealed.size() - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES);
        if (crypto_secretbox_open_easy (plain.data(),
                                        sealed.data() + crypto_secretbox_NONCEBYTES,
                                        sealed.size() - crypto_secretbox_NONCEBYTES,
                                        sealed.data(),
                                        reinterpret_cast<const unsigned char*> (key_.data()))
            != 0)
            return Load::tampered;

        JsonValue json;
        if (! JsonValue::parse (std::string (plain.begin(), plain.end()), json) || ! json["serial"].isString() || ! json["token"].isString())
            return Load::tampered;
        out.serial = json["serial"].asString();
        out.token = json["token"].asString();
        // Pending machine requests, space-separated (files written before offline activation have none).
        const std::string& requests = json["requests"].asString();
        for (std::size_t at = 0; at < requests.size();)
        {
            const auto end = std::min (requests.find (' ', at), requests.size());
            if (end > at)
                out.requests.push_back (requests.substr (at, end - at));
            at = end + 1;
        }
        return Load::ok;
    }

    bool LicenseStore::save (const StoredLicense& license) const
    {
        if (file_.empty() || key_.empty())
            return false;

        std::string requests;
        for (const auto& nonce : license.requests)
            requests += (requests.empty() ? "" : " ") + nonce;
        const std::string plain = JsonObjectWriter().add ("serial", license.serial).add ("token", license.token).addIfNotEmpty ("requests", requests).str();
        std::vector<unsigned char> sealed (crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + plain.size());
        randombytes_buf (sealed.data(), crypto_secretbox_NONCEBYTES);
        crypto_secretbox_easy (sealed.data() + crypto_secretbox_NONCEBYTES,
                               reinterpret_cast<const unsigned char*> (plain.data()),
                               plain.size(),
                               sealed.data(),
                               reinterpret_cast<const unsigned char*> (key_.data()));

        std::error_code error;
        std::filesystem::create_directories (file_.parent_path(), error);
        auto temporary = file_;
        temporary += ".tmp";
        {
            std::ofstream out (temporary, std::ios::binary | std::ios::trunc);
            out << magic << "." << base64UrlEncode (sealed.data(), sealed.size()) << "\n";
            out.flush();
            if (! out)
                return false;
        }
        std::filesystem::permissions (temporary, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, error);
        std::filesystem::rename (temporary, file_, error);
        if (error)
        {
            std::filesystem::remove (temporary, error);
            return false;
        }
        return true;
    }

    void LicenseStore::clear() const
    {
        std::error_code ignored;
        if (! file_.empty())
            std::filesystem::remove (file_, ignored);
    }
}
