#include "steptimeline.h"
