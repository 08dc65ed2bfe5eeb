#include "partita/core/npy.h"
#include <gtest/gtest.h>
TEST(Npy, Placeholder) {}
