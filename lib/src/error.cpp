#include "convlab/error.hpp"

#include <array>

#include "convlab/enum_names.hpp"

namespace convlab {

constexpr auto kErrorCodeNames = enum_names<ErrorCode::backend>({
    {ErrorCode::invalid_problem, "invalid_problem"},
    {ErrorCode::invalid_argument, "invalid_argument"},
    {ErrorCode::unsupported, "unsupported"},
    {ErrorCode::unavailable, "unavailable"},
    {ErrorCode::out_of_memory, "out_of_memory"},
    {ErrorCode::over_budget, "over_budget"},
    {ErrorCode::io, "io"},
    {ErrorCode::backend, "backend"},
});

const char* to_string(ErrorCode code) noexcept { return name_of(kErrorCodeNames, code); }

}  // namespace convlab
