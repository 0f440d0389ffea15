// A hardware header that reaches up into cost/: checklayers.cmake must refuse it.
#include "base/units.h"
#include "cost/evaluation.h"
