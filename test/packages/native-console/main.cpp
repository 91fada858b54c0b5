// A console program built by test/packages/native.test.ts against the generated `native` package and real JUCE
// (juce_core + juce_events). It plays the part of a plugin: each command is one run of the "plugin", with the
// license file kept between runs, and prints one JSON object on stdout.
//
//   patchbay-console <command> [--base-url URL] [--machine-id ID] [--license-file PATH]
//                              [--transport juce|curl] [--now UNIX_SECONDS] [--serial CODE]
//                              [--out PATH] [--in PATH] [--machine-name NAME]
//
// Commands: info, activate, validate, check (offline, no network), gate (LicenseGate: offline decision, then a
// background validate), gate-grace (a LicenseGate left running while its clock moves from --now to --later, no
// call in between), tamper (every one-character change of the stored token must be refused), deactivate,
// request (offline activation: write the machine request file to --out), load-license (load the license file --in),
// gate-load (the same through a LicenseGate, as the license panel does).
#include <patchbay_juce/patchbay_juce.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>

using namespace patchbay;

namespace
{
    struct Args
    {
        std::string command;
        std::map<std::string, std::string> options;

        std::string get (const std::string& name, const std::string& fallback = {}) const
        {
            const auto it = options.find (name);
            return it == options.end() ? fallback : it->second;
        }
    };

    Args parse (int argc, char** argv)
    {
        Args args;
        if (argc > 1)
            args.command = argv[1];
        for (int i = 2; i + 1 < argc; i += 2)
        {
            std::string name = argv[i];
            if (name.rfind ("--", 0) == 0)
                args.options[name.substr (2)] = argv[i + 1];
        }
        return args;
    }

    LicenseOptions optionsFrom (const Args& args)
    {
        LicenseOptions options;
        options.baseUrl = args.get ("base-url", options.baseUrl);
        options.machineId = args.get ("machine-id");
        options.licenseFile = args.get ("license-file");
        options.appVersion = "1.0.0-console";
        options.machineName = "Patchbay console test";
        options.timeoutMs = 5000;
        const std::string now = args.get ("now");
        if (! now.empty())
        {
            const std::int64_t fixed = std::stoll (now);
            options.clock = [fixed] { return fixed; };
        }
        return options;
    }

    std::shared_ptr<HttpTransport> transportFrom (const Args& args)
    {
        if (args.get ("transport", "juce") == "curl")
        {
           #if PATCHBAY_WITH_CURL
            return std::make_shared<CurlTransport>();
           #else
            std::cerr << "built without PATCHBAY_WITH_CURL\n";
            std::exit (2);
           #endif
        }
        return std::make_shared<juce_support::JuceUrlTransport>();
    }

    std::string statusJson (const std::string& command, const LicenseStatus& status, const std::string& extra = {})
    {
        std::string out = "{" + jsonQuote ("command") + ":" + jsonQuote (command);
        out += ",\"licensed\":" + std::string (status.licensed ? "true" : "false");
        out += ",\"code\":" + jsonQuote (status.code);
        out += ",\"detail\":" + jsonQuote (status.detail);
        out += ",\"serial\":" + jsonQuote (status.serial);
        out += ",\"expiresAt\":" + std::to_string (status.expiresAt);
        out += ",\"httpStatus\":" + std::to_string (status.httpStatus);
        out += ",\"released\":" + std::string (status.released ? "true" : "false");
        return out + extra + "}";
    }

    std::string readFile (const std::string& path)
    {
        std::ifstream in (path, std::ios::binary);
        return std::string ((std::istreambuf_iterator<char> (in)), std::istreambuf_iterator<char>());
    }

    /** Every token that differs from the stored one in one character must be refused. */
    int tamper (LicenseClient& client)
    {
        StoredLicense stored;
        if (client.store().load (stored) != LicenseStore::Load::ok || stored.token.empty())
        {
            std::cout << "{\"command\":\"tamper\",\"error\":\"no stored token\"}\n";
            return 1;
        }

        const TokenCheck original = client.verifyToken (stored.token);
        const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        std::map<std::string, int> codes;
        int variants = 0;
        int accepted = 0;
        for (std::size_t i = 0; i < stored.token.size(); ++i)
        {
            std::string changed = stored.token;
            // The next character of the alphabet: for the last character of a part that also tests that a
            // "same bytes, different text" encoding is refused.
            const auto at = alphabet.find (changed[i]);
            changed[i] = at == std::string::npos ? 'A' : alphabet[(at + 1) % alphabet.size()];
            const TokenCheck check = client.verifyToken (changed);
            ++variants;
            if (check.ok())
                ++accepted;
            ++codes[tokenErrorCode (check.error)];
        }

        std::string codeJson;
        for (const auto& [code, count] : codes)
            codeJson += (codeJson.empty() ? "" : ",") + jsonQuote (code) + ":" + std::to_string (count);

        std::cout << "{\"command\":\"tamper\",\"original\":" << jsonQuote (tokenErrorCode (original.error))
                  << ",\"tokenLength\":" << stored.token.size() << ",\"variants\":" << variants
                  << ",\"accepted\":" << accepted << ",\"codes\":{" << codeJson << "}}\n";
        return accepted == 0 && original.ok() ? 0 : 1;
    }
}

int main (int argc, char** argv)
{
    const Args args = parse (argc, argv);
    const LicenseOptions options = optionsFrom (args);

    if (args.command == "gate")
    {
        // What a processor does: decide from the stored token, then validate on the gate's thread.
        juce_support::LicenseGate gate (options);
        const bool atStart = gate.isLicensed();
        const bool idle = gate.waitUntilIdle (15000);
        std::cout << statusJson ("gate", gate.status(),
                                 ",\"licensedAtStart\":" + std::string (atStart ? "true" : "false") + ",\"licensedAfterValidate\":"
                                     + std::string (gate.isLicensed() ? "true" : "false") + ",\"idle\":" + (idle ? "true" : "false"))
                  << "\n";
        return 0;
    }

    if (args.command == "gate-grace")
    {
        // A plugin left running offline: the gate decided at start, then only the clock moves.
        auto clock = std::make_shared<std::atomic<std::int64_t>> (std::stoll (args.get ("now", "0")));
        LicenseOptions moving = options;
        moving.clock = [clock] { return clock->load(); };
        juce_support::LicenseGate gate (moving, false);
        const LicenseStatus before = gate.status();
        const bool licensedBefore = gate.isLicensed();
        clock->store (std::stoll (args.get ("later", "0")));
        std::cout << statusJson ("gate-grace", gate.status(),
                                 ",\"licensedBefore\":" + std::string (licensedBefore ? "true" : "false") + ",\"codeBefore\":"
                                     + jsonQuote (before.code) + ",\"expiresAtBefore\":" + std::to_string (before.expiresAt)
                                     + ",\"licensedAfter\":" + (gate.isLicensed() ? "true" : "false"))
                  << "\n";
        return 0;
    }

    if (args.command == "gate-load")
    {
        // What the license panel does with the file the user picked.
        juce_support::LicenseGate gate (options, false);
        gate.loadLicenseFile (juce::String::fromUTF8 (readFile (args.get ("in")).c_str()));
        const bool idle = gate.waitUntilIdle (15000);
        std::cout << statusJson ("gate-load", gate.status(),
                                 ",\"licensedNow\":" + std::string (gate.isLicensed() ? "true" : "false") + ",\"idle\":" + (idle ? "true" : "false"))
                  << "\n";
        return 0;
    }

    LicenseClient client (transportFrom (args), options);

    if (args.command == "info")
    {
        std::cout << "{\"command\":\"info\",\"machineId\":" << jsonQuote (client.machineId())
                  << ",\"computedMachineId\":" << jsonQuote (machineIdFor (config::appId))
                  << ",\"appId\":" << jsonQuote (config::appId) << ",\"baseUrl\":" << jsonQuote (config::licensingBaseUrl)
                  << ",\"pinnedKeys\":" << client.verifier().keys().size() << ",\"templateVersion\":" << jsonQuote (config::templateVersion)
                  << ",\"experienceMode\":" << jsonQuote (config::experienceMode) << ",\"uiWidth\":" << config::uiWidth
                  << ",\"uiHeight\":" << config::uiHeight << ",\"offlineGraceDays\":" << config::offlineGraceDays
                  << ",\"releaseChannel\":" << jsonQuote (config::releaseChannel) << ",\"storefrontUrl\":" << jsonQuote (config::storefrontUrl)
                  << ",\"licenseFile\":" << jsonQuote (client.store().file().string()) << ",\"juce\":" << jsonQuote (juce::SystemStats::getJUCEVersion().toStdString())
                  << "}\n";
        return 0;
    }
    if (args.command == "activate")
    {
        const LicenseStatus status = client.activate (args.get ("serial"));
        StoredLicense stored;
        client.store().load (stored);
        std::cout << statusJson ("activate", status, ",\"token\":" + jsonQuote (stored.token)) << "\n";
        return 0;
    }
    if (args.command == "validate")
    {
        std::cout << statusJson ("validate", client.validate()) << "\n";
        return 0;
    }
    if (args.command == "check")
    {
        std::cout << statusJson ("check", client.checkOffline()) << "\n";
        return 0;
    }
    if (args.command == "deactivate")
    {
        std::cout << statusJson ("deactivate", client.deactivate()) << "\n";
        return 0;
    }
    if (args.command == "tamper")
        return tamper (client);
    if (args.command == "request")
    {
        const MachineRequest request = client.machineRequest (args.get ("serial"), args.get ("machine-name"));
        bool written = false;
        if (request.status.code == "REQUEST_READY")
        {
            std::ofstream out (args.get ("out"), std::ios::binary | std::ios::trunc);
            out << request.content;
            written = static_cast<bool> (out);
        }
        std::cout << statusJson ("request", request.status, ",\"filename\":" + jsonQuote (request.filename) + ",\"written\":" + (written ? "true" : "false"))
                  << "\n";
        return 0;
    }
    if (args.command == "load-license")
    {
        std::cout << statusJson ("load-license", client.loadLicenseFile (readFile (args.get ("in")))) << "\n";
        return 0;
    }

    std::cerr << "unknown command: " << args.command << "\n";
    return 2;
}
