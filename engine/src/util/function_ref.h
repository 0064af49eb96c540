// SPDX-License-Identifier: GPL-2.0-or-later
// A reference to a callable, for a callback called only while the function it is passed to runs:
// two pointers, where a std::function copies the callable (onto the heap for a lambda that
// captures more than two references, once per call of the function it is passed to).
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace rdmatel {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  /// None: false, not to be called.
  FunctionRef() = default;
  /// Refers to `f`, which must outlive the reference (a temporary lives to the end of the call
  /// it is an argument of).
  template <typename F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): converts as std::function does
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* c, Args... args) -> R {
          return std::invoke(*static_cast<std::remove_reference_t<F>*>(c), std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(callable_, std::forward<Args>(args)...); }
  explicit operator bool() const { return call_ != nullptr; }

 private:
  void* callable_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

}  // namespace rdmatel
