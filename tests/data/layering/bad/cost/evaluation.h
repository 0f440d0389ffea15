// A cost header that does not name the folder of what it includes.
#include "chip.h"
