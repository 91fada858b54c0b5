#include "PatchbayMachine.h"

#include <sodium.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <mutex>
#include <system_error>

#if defined(_WIN32)
 #ifndef NOMINMAX
  #define NOMINMAX
 #endif
 #ifndef WIN32_LEAN_AND_MEAN
  #define WIN32_LEAN_AND_MEAN
 #endif
 #include <windows.h>
#elif defined(__APPLE__)
 #include <TargetConditionals.h>
 #if TARGET_OS_OSX
  #include <CoreFoundation/CoreFoundation.h>
  #include <IOKit/IOKitLib.h>
 #endif
 #include <pwd.h>
 #include <unistd.h>
#else
 #include <pwd.h>
 #include <unistd.h>
#endif

namespace patchbay
{
    namespace
    {
        std::string trimText (std::string text)
        {
            const auto first = text.find_first_not_of (" \t\r\n");
            if (first == std::string::npos)
                return {};
            const auto last = text.find_last_not_of (" \t\r\n");
            return text.substr (first, last - first + 1);
        }

       #if defined(_WIN32)
        std::string utf8 (const std::wstring& wide)
        {
            if (wide.empty())
                return {};
            const int size = WideCharToMultiByte (CP_UTF8, 0, wide.data(), static_cast<int> (wide.size()), nullptr, 0, nullptr, nullptr);
            std::string out (static_cast<std::size_t> (size > 0 ? size : 0), '\0');
            if (size > 0)
                WideCharToMultiByte (CP_UTF8, 0, wide.data(), static_cast<int> (wide.size()), out.data(), size, nullptr, nullptr);
            return out;
        }

        std::string platformIdentifier()
        {
            HKEY key = nullptr;
            // KEY_WOW64_64KEY: a 32-bit plugin host must read the same value as a 64-bit one.
            if (RegOpenKeyExW (HKEY_LOCAL_MACHINE, L"SOFTWARE\\Microsoft\\Cryptography", 0, KEY_READ | KEY_WOW64_64KEY, &key) != ERROR_SUCCESS)
                return {};
            wchar_t buffer[256] = {};
            DWORD size = sizeof (buffer) - sizeof (wchar_t);
            DWORD type = 0;
            const LSTATUS status = RegQueryValueExW (key, L"MachineGuid", nullptr, &type, reinterpret_cast<LPBYTE> (buffer), &size);
            RegCloseKey (key);
            if (status != ERROR_SUCCESS || type != REG_SZ)
                return {};
            return trimText (utf8 (buffer));
        }
       #elif defined(__APPLE__) && TARGET_OS_OSX
        std::string platformIdentifier()
        {
            // 0 is the default main port (kIOMainPortDefault, formerly kIOMasterPortDefault) on every macOS version.
            const io_service_t service = IOServiceGetMatchingService (0, IOServiceMatching ("IOPlatformExpertDevice"));
            if (service == 0)
                return {};
            CFTypeRef value = IORegistryEntryCreateCFProperty (service, CFSTR ("IOPlatformUUID"), kCFAllocatorDefault, 0);
            IOObjectRelease (service);
            if (value == nullptr)
                return {};
            std::string out;
            char buffer[128] = {};
            if (CFGetTypeID (value) == CFStringGetTypeID()
                && CFStringGetCString (static_cast<CFStringRef> (value), buffer, sizeof (buffer), kCFStringEncodingUTF8))
                out = buffer;
            CFRelease (value);
            return trimText (out);
        }
       #elif defined(__APPLE__)
        // iOS has no readable hardware id: the stored random seed stands in (it lives as long as the app's data).
        std::string platformIdentifier() { return {}; }
       #else
        std::string platformIdentifier()
        {
            for (const char* file : { "/etc/machine-id", "/var/lib/dbus/machine-id" })
            {
                std::ifstream in (file);
                std::string line;
                if (in && std::getline (in, line) && ! trimText (line).empty())
                    return trimText (line);
            }
            return {};
        }
       #endif

       #if ! defined(_WIN32)
        std::filesystem::path homeDirectory()
        {
            if (const char* home = std::getenv ("HOME"); home != nullptr && home[0] != '\0')
                return home;
            if (const passwd* entry = getpwuid (getuid()); entry != nullptr && entry->pw_dir != nullptr)
                return entry->pw_dir;
            return {};
        }
       #endif

        /** A random stand-in for a host without a readable identifier, created once and kept. */
        std::string storedSeed()
        {
            const auto dir = userDataDirectory();
            if (dir.empty())
                return {};
            const auto file = dir / "Patchbay" / "machine-seed";
            {
                std::ifstream in (file);
                std::string line;
                if (in && std::getline (in, line) && trimText (line).size() == 64)
                    return trimText (line);
            }
            if (! ensureSodium())
                return {};
            unsigned char seed[32];
            randombytes_buf (seed, sizeof (seed));
            char hex[65];
            sodium_bin2hex (hex, sizeof (hex), seed, sizeof (seed));
            std::error_code ignored;
            std::filesystem::create_directories (file.parent_path(), ignored);
            std::ofstream out (file, std::ios::binary | std::ios::trunc);
            out << hex << "\n";
            return out ? std::string (hex) : std::string();
        }
    }

    bool ensureSodium()
    {
        static std::once_flag once;
        static bool ready = false;
        std::call_once (once, [] { ready = sodium_init() >= 0; });
        return ready;
    }

    const char* platformName()
    {
       #if defined(_WIN32)
        return "windows";
       #elif defined(__APPLE__)
        return "macos";
       #elif defined(__linux__)
        return "linux";
       #else
        return "other";
       #endif
    }

    std::filesystem::path userDataDirectory()
    {
       #if defined(_WIN32)
        wchar_t buffer[MAX_PATH * 2] = {};
        const DWORD length = GetEnvironmentVariableW (L"APPDATA", buffer, static_cast<DWORD> (std::size (buffer)));
        if (length == 0 || length >= std::size (buffer))
            return {};
        return std::filesystem::path (buffer);
       #elif defined(__APPLE__)
        const auto home = homeDirectory();
        return home.empty() ? home : home / "Library" / "Application Support";
       #else
        if (const char* config = std::getenv ("XDG_CONFIG_HOME"); config != nullptr && config[0] == '/')
            return config;
        const auto home = homeDirectory();
        return home.empty() ? home : home / ".config";
       #endif
    }

    std::string hostIdentifier()
    {
        static std::mutex lock;
        static std::string cached;
        const std::lock_guard<std::mutex> guard (lock);
        if (cached.empty())
        {
            cached = platformIdentifier();
            if (cached.empty())
                cached = storedSeed();
        }
        return cached;
    }

    std::string machineIdFor (const std::string& appId)
    {
        const std::string host = hostIdentifier();
        if (host.empty() || ! ensureSodium())
            return {};
        std::string input = "patchbay-machine-v1";
        input += '\0';
        input += appId;
        input += '\0';
        input += host;
        unsigned char digest[crypto_hash_sha256_BYTES];
        crypto_hash_sha256 (digest, reinterpret_cast<const unsigned char*> (input.data()), input.size());
        char hex[crypto_hash_sha256_BYTES * 2 + 1];
        sodium_bin2hex (hex, sizeof (hex), digest, sizeof (digest));
        return hex;
    }
}
