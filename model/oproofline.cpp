#include "oproofline.h"
