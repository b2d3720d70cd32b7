// TFLite stable delegates (a shared object exporting TFL_TheStableDelegate, a TfLiteStableDelegate):
// opening one so that its opaque-API references bind to the loader (tflite_opaque.cc), reading and
// checking its TfLiteStableDelegate, and creating its delegate with the settings baton passes.
#pragma once

#include <string>

#include "tflite_opaque_api.h"

namespace tflite_delegates {

struct StableFile {
  const TfLiteStableDelegate* symbol = nullptr;  // in the opened library, which stays loaded
  std::string name;                              // delegate_name, made a valid baton plugin name
  std::string version;                           // delegate_version
  std::string abi;                               // delegate_abi_version
};

// Opens the stable delegate at `path` and checks its TfLiteStableDelegate; false with the reason.
bool open_stable_delegate(const char* path, StableFile* out, std::string* why);

// Creates the delegate (TfLiteOpaqueDelegatePlugin::create with baton's settings, below); null with the
// reason, which carries the plugin's get_delegate_errno.
TfLiteDelegate* create_stable_delegate(const TfLiteStableDelegate* stable, std::string* why);
void destroy_stable_delegate(const TfLiteStableDelegate* stable, TfLiteDelegate* delegate);

// The settings baton passes to create: a TFLiteSettings flatbuffer table with no field set, so every
// setting reads as its default (TFLite's own loader passes the table its application built).
const void* empty_tflite_settings();

}  // namespace tflite_delegates
