#include "PatchbayCurlTransport.h"

#if PATCHBAY_WITH_CURL

 #include <curl/curl.h>
 #include <memory>
 #include <mutex>

namespace patchbay
{
    namespace
    {
        constexpr std::size_t maxAnswer = 1024 * 1024;

        std::size_t collect (char* data, std::size_t size, std::size_t count, void* user)
        {
            auto* out = static_cast<std::string*> (user);
            const std::size_t bytes = size * count;
            if (out->size() + bytes > maxAnswer)
                return 0; // makes curl fail with CURLE_WRITE_ERROR
            out->append (data, bytes);
            return bytes;
        }
    }

    CurlTransport::CurlTransport()
    {
        // curl_global_init is not thread-safe on older libcurl; run it once, before any handle exists.
        static std::once_flag once;
        std::call_once (once, [] { curl_global_init (CURL_GLOBAL_DEFAULT); });
    }

    HttpResponse CurlTransport::send (const std::string& method,
                                      const std::string& url,
                                      const std::vector<HttpHeader>& headers,
                                      const std::string& body,
                                      int timeoutMs)
    {
        HttpResponse response;
        std::unique_ptr<CURL, decltype (&curl_easy_cleanup)> curl (curl_easy_init(), &curl_easy_cleanup);
        if (! curl)
        {
            response.error = "curl_easy_init failed";
            return response;
        }

        curl_slist* list = nullptr;
        for (const auto& header : headers)
            list = curl_slist_append (list, (header.name + ": " + header.value).c_str());
        std::unique_ptr<curl_slist, decltype (&curl_slist_free_all)> headerList (list, &curl_slist_free_all);

        char errorText[CURL_ERROR_SIZE] = {};
        CURL* h = curl.get();
        curl_easy_setopt (h, CURLOPT_URL, url.c_str());
        curl_easy_setopt (h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt (h, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt (h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt (h, CURLOPT_SSL_VERIFYHOST, 2L);
        curl_easy_setopt (h, CURLOPT_TIMEOUT_MS, static_cast<long> (timeoutMs));
        curl_easy_setopt (h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long> (timeoutMs));
        curl_easy_setopt (h, CURLOPT_HTTPHEADER, headerList.get());
        curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, &collect);
        curl_easy_setopt (h, CURLOPT_WRITEDATA, &response.body);
        curl_easy_setopt (h, CURLOPT_ERRORBUFFER, errorText);
        curl_easy_setopt (h, CURLOPT_USERAGENT, "patchbay-licensing/1");
        if (method == "POST")
        {
            curl_easy_setopt (h, CURLOPT_POST, 1L);
            curl_easy_setopt (h, CURLOPT_POSTFIELDS, body.c_str());
            curl_easy_setopt (h, CURLOPT_POSTFIELDSIZE, static_cast<long> (body.size()));
        }

        const CURLcode result = curl_easy_perform (h);
        if (result != CURLE_OK)
        {
            response.error = errorText[0] != '\0' ? errorText : curl_easy_strerror (result);
            response.body.clear();
            return response;
        }

        long status = 0;
        curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
        response.status = static_cast<int> (status);
        return response;
    }
}

#endif
