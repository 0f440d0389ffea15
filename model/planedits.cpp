#include "planedits.h"
