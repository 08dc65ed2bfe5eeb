#include "help_formatter.h"

#include <sstream>
#include <utility>

namespace partita::cli {
namespace {

constexpr std::size_t kOptionColumn = 32;  // where option descriptions start

}  // namespace

std::string wrap_text(const std::string& text, std::size_t width) {
  std::string out;
  std::istringstream paragraphs(text);
  std::string paragraph;
  bool first_paragraph = true;
  while (std::getline(paragraphs, paragraph)) {
    if (!first_paragraph) out += '\n';
    first_paragraph = false;
    std::istringstream words(paragraph);
    std::string word;
    std::size_t line_length = 0;
    while (words >> word) {
      if (line_length > 0 && line_length + 1 + word.size() > width) {
        out += '\n';
        line_length = 0;
      } else if (line_length > 0) {
        out += ' ';
        ++line_length;
      }
      out += word;
      line_length += word.size();
    }
  }
  return out;
}

WrappingFormatter::WrappingFormatter() { column_width(kOptionColumn); }

std::string WrappingFormatter::make_description(const CLI::App* app) const {
  const std::string description = CLI::Formatter::make_description(app);
  if (description.empty()) return description;
  return wrap_text(description, kLineWidth) + "\n\n";
}

void WrappingFormatter::set_summary(const CLI::App* command, std::string summary) {
  summaries_[command] = std::move(summary);
}

std::string WrappingFormatter::make_subcommand(const CLI::App* command) const {
  auto found = summaries_.find(command);
  std::string summary = found != summaries_.end() ? found->second : command->get_description();
  summary = summary.substr(0, summary.find('\n'));
  std::stringstream out;
  CLI::detail::format_help(out, command->get_name(), wrap_text(summary, kLineWidth - kOptionColumn),
                           kOptionColumn);
  return out.str();
}

std::string WrappingFormatter::make_footer(const CLI::App* app) const {
  const std::string footer = app->get_footer();
  return (footer.empty() ? "" : footer + "\n\n") + wrap_text(kRepeatedFlagsNote, kLineWidth) + "\n";
}

std::string WrappingFormatter::make_option_desc(const CLI::Option* option) const {
  return wrap_text(option->get_description(), kLineWidth - kOptionColumn);
}

}  // namespace partita::cli
