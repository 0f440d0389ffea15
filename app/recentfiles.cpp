#include "recentfiles.h"
