#include "meshgroups.h"
