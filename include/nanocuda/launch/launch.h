// Forwarding header: the one-off launch() is a temporary Launcher (launch/launcher.h).
#pragma once

#include "nanocuda/launch/launcher.h"
