#include "partita/graph/csr.h"
#include <gtest/gtest.h>
TEST(Csr, Placeholder) {}
