#include "autosaver.h"
