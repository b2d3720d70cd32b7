// Strings: the string outputs of glue/string_output.h, and SKIP_GRAM, TFLite's legacy text op that
// splits a sentence into words and writes its n-grams, each word of an n-gram at most max_skip_size words
// after the one before it.
#include <cctype>
#include <cstring>
#include <string_view>
#include <vector>

#include "glue/string_output.h"
#include "baton/tflite_ops.h"

namespace baton::builtin {

void set_string_output(OpContext& ctx, baton_tensor* out, const strings::PackedWriter& writer) {
  ctx.kept_strings() = writer.packed();
  ctx.set_byte_size(out, ctx.kept_strings().size());
}

void write_string_output(OpContext& ctx, baton_tensor* out) {
  const std::vector<uint8_t>& bytes = ctx.kept_strings();
  std::memcpy(ctx.mutable_data<uint8_t>(out), bytes.data(), bytes.size());
}

void string_output_invoke(OpContext& ctx) { write_string_output(ctx, ctx.output(0)); }

namespace {

void string_copy_invoke(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  std::memcpy(ctx.mutable_data<void>(ctx.output(0)), ctx.data<void>(in), ctx.api().tensor_byte_size(in));
}

}  // namespace

void prepare_string_copy(OpContext& ctx) {
  baton_tensor* in = ctx.input(0);
  if (!ctx.data<void>(in)) return ctx.set_dynamic(ctx.output(0));
  ctx.set_byte_size(ctx.output(0), ctx.api().tensor_byte_size(in));
  ctx.set_invoke(string_copy_invoke);
}

namespace {

// ---- SKIP_GRAM: input [..] string (its first string is the sentence), output [n-grams] string ----

// The words of a sentence as TFLite 2.9 splits it: a word ends at a whitespace byte (isspace in the C
// locale) and starts after one, except that a word starting at the sentence's first byte is kept only
// when that byte is not whitespace, and the last word is kept whatever it starts with. (So " a b" gives
// "b": the first word after a leading space is lost, as in TFLite.)
std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  size_t start = 0;
  auto space = [&](size_t i) { return std::isspace(static_cast<unsigned char>(s[i])) != 0; };
  for (size_t i = 1; i < s.size(); ++i) {
    if (!space(i)) continue;
    if (i > start && !space(start)) words.push_back(s.substr(start, i - start));
    start = i + 1;
  }
  if (s.size() > start) words.push_back(s.substr(start));
  return words;
}

struct SkipGram {
  const std::vector<std::string_view>& words;
  int32_t n, max_skip;
  bool all_sizes;
  strings::PackedWriter& writer;
  std::vector<std::string_view> gram;

  // The n-grams that extend the words in `gram` (the last of them word `last`), then `gram` itself when
  // its size is one that is written: depth first, in word order, each prefix after its extensions.
  void extend(size_t last) {
    if (static_cast<int32_t>(gram.size()) < n) {
      const size_t end = std::min(words.size(), last + 2 + static_cast<size_t>(max_skip));
      for (size_t next = last + 1; next < end; ++next) {
        gram.push_back(words[next]);
        extend(next);
        gram.pop_back();
      }
    }
    if (static_cast<int32_t>(gram.size()) == n || all_sizes) writer.add_joined(gram, ' ');
  }
};

void skip_gram_prepare(OpContext& ctx) {
  ctx.require_host_abi_minor(7, "SKIP_GRAM's options");
  ctx.require(ctx.input_count() == 1 && ctx.output_count() == 1, "takes one input and gives one output");
  baton_tensor* in = ctx.input(0);
  baton_tensor* out = ctx.output(0);
  ctx.require_type(in, "input", {BATON_TYPE_STRING});
  ctx.require_type(out, "output", {BATON_TYPE_STRING});
  const baton_skip_gram_options& o = ctx.options().u.skip_gram;
  ctx.require(o.ngram_size >= 1, "ngram_size " + std::to_string(o.ngram_size) + " must be at least 1");
  ctx.require(o.max_skip_size >= 0, "max_skip_size " + std::to_string(o.max_skip_size) + " must not be negative");
  if (!ctx.inputs_have_values()) return ctx.set_dynamic(out);
  ctx.require(ctx.element_count(in) >= 1, "the input holds no string (the sentence is its first)");
  const std::vector<std::string_view> words = split_words(strings::PackedStrings(ctx.data<void>(in)).at(0));
  strings::PackedWriter writer;
  if (static_cast<int64_t>(words.size()) >= o.ngram_size) {
    SkipGram g{words, o.ngram_size, o.max_skip_size, o.include_all_ngrams != 0, writer, {}};
    for (size_t first = 0; first < words.size(); ++first) {
      g.gram.assign(1, words[first]);
      g.extend(first);
    }
  }
  ctx.set_output_shape(out, {static_cast<int32_t>(writer.count())});
  set_string_output(ctx, out, writer);
}

constexpr OpDef kOps[] = {
    {BATON_OP_SKIP_GRAM, "SKIP_GRAM", 1, 1, skip_gram_prepare, string_output_invoke},
};

}  // namespace

std::span<const OpDef> string_ops() { return kOps; }

}  // namespace baton::builtin
