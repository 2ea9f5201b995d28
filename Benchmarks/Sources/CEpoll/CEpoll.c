#include "CEpoll.h"
