/*******************************************************************************
 The block below is read by the Projucer and by JUCE's CMake (juce_add_module).

 BEGIN_JUCE_MODULE_DECLARATION

  ID:                 patchbay_juce
  vendor:             patchbay
  version:            {{templateVersion}}
  name:               Patchbay licensing
  description:        Serial activation, validation and offline license-token verification (Ed25519) for one Patchbay product.
  license:            Proprietary
  minimumCppStandard: 17

  dependencies:       juce_core juce_events
  OSXFrameworks:      IOKit CoreFoundation
  linuxPackages:      libsodium
  windowsLibs:        advapi32 libsodium
  mingwLibs:          advapi32 sodium

 END_JUCE_MODULE_DECLARATION

 The framework-agnostic core lives in ../patchbay_licensing (keep the two folders side by side): this module
 compiles it, adds a juce::URL transport, a LicenseGate for processors and, when juce_gui_basics is in the
 project, the LicensePanel component. libsodium must be installed (see README.md).
*******************************************************************************/

#pragma once
#define PATCHBAY_JUCE_H_INCLUDED

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>

#include <juce_core/juce_core.h>
#include <juce_events/juce_events.h>

#include "../patchbay_licensing/core/PatchbayBase64.h"
#include "../patchbay_licensing/core/PatchbayJson.h"
#include "../patchbay_licensing/core/PatchbayLicense.h"
#include "../patchbay_licensing/core/PatchbayMachine.h"
#include "../patchbay_licensing/core/PatchbayCurlTransport.h"

#include "source/PatchbayJuceTransport.h"
#include "source/PatchbayLicenseGate.h"

#if JUCE_MODULE_AVAILABLE_juce_gui_basics
 #include <juce_gui_basics/juce_gui_basics.h>
 #include "source/PatchbayLicensePanel.h"
#endif
