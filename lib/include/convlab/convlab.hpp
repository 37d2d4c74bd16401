#pragma once
/// \file
/// Everything research code needs, in one include.

#include "convlab/accuracy.hpp"
#include "convlab/algorithm.hpp"
#include "convlab/cards.hpp"
#include "convlab/config.hpp"
#include "convlab/descriptor.hpp"
#include "convlab/device.hpp"
#include "convlab/error.hpp"
#include "convlab/harness.hpp"
#include "convlab/memory.hpp"
#include "convlab/numerics.hpp"
#include "convlab/problem.hpp"
#include "convlab/registry.hpp"
#include "convlab/text_input.hpp"
#include "convlab/threads.hpp"
