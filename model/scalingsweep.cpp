#include "scalingsweep.h"
