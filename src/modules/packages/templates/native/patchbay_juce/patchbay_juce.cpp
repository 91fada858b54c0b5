// The module's only translation unit: JUCE's build compiles every .cpp at the top of a module folder, so the
// sources below are included here rather than placed beside this file.
#ifdef PATCHBAY_JUCE_H_INCLUDED
 /* When you add this cpp file to your project, you mustn't include it in a file where you've
    already included any other headers - just put it inside a file on its own, possibly with your config
    flags preceding it, but don't include anything else. That also includes avoiding any automatic prefix
    header files that the compiler may be using. */
 #error "Incorrect use of JUCE cpp file"
#endif

#include "patchbay_juce.h"

#include "../patchbay_licensing/core/PatchbayBase64.cpp"
#include "../patchbay_licensing/core/PatchbayCurlTransport.cpp"
#include "../patchbay_licensing/core/PatchbayJson.cpp"
#include "../patchbay_licensing/core/PatchbayLicense.cpp"
#include "../patchbay_licensing/core/PatchbayMachine.cpp"
#include "../patchbay_licensing/core/PatchbayOffline.cpp"
#include "../patchbay_licensing/core/PatchbayStore.cpp"
#include "../patchbay_licensing/core/PatchbayToken.cpp"

#include "source/PatchbayJuceTransport.cpp"
#include "source/PatchbayLicenseGate.cpp"

#if JUCE_MODULE_AVAILABLE_juce_gui_basics
 #include "source/PatchbayLicensePanel.cpp"
#endif
