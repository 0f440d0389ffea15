#include "plandocument.h"
