// SPDX-License-Identifier: GPL-2.0-or-later
#include "views/settings_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QVBoxLayout>
#include <string>

namespace rdmatel::ui {

SettingsDialog::SettingsDialog(const SettingOverrides& current, QWidget* parent) : QDialog(parent) {
  setWindowTitle("rdmatel-analyzer settings");
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(
      "The engine's settings, the same as the CLI's options and Wireshark's preferences (hover "
      "over a name for its meaning). OK re-reads the open captures with them. The analyzer's "
      "own default: flow periods of 0.01 s (the CLI's is 1 s).",
      this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* form_host = new QWidget;
  auto* form = new QFormLayout(form_host);
  for (const SettingSpec* s : setting_specs()) {
    if (!s->cli && !s->preference) continue;
    QString label = QString::fromLatin1(s->name).replace('_', ' ');
    if (*s->unit)
      label += QString(" (%1)").arg(s->unit);
    else if (s->type == SettingType::kList ||
             (s->type == SettingType::kCount && std::string(s->metavar) != "N"))
      label += QString(" (%1)").arg(s->metavar);
    const std::string value = current.text(s->name);
    QWidget* editor = nullptr;
    switch (s->type) {
      case SettingType::kFlag: {
        auto* c = new QCheckBox(form_host);
        c->setChecked(value == "on" || value == "1" || value == "true");
        editor = c;
        break;
      }
      case SettingType::kList: {
        auto* t = new QPlainTextEdit(QString::fromStdString(value), form_host);
        t->setPlaceholderText(QString("one %1 per line").arg(s->metavar));
        t->setFixedHeight(t->fontMetrics().height() * 4);
        editor = t;
        break;
      }
      default:
        editor = new QLineEdit(QString::fromStdString(value), form_host);
        break;
    }
    editor->setToolTip(QString::fromUtf8(s->help));
    editor->setObjectName(s->name);
    editors_[s->name] = editor;
    auto* name = new QLabel(label, form_host);
    name->setToolTip(QString::fromUtf8(s->help));
    form->addRow(name, editor);
  }
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(form_host);
  scroll->setWidgetResizable(true);
  layout->addWidget(scroll, 1);
  error_ = new QLabel(this);
  error_->setStyleSheet("color: #b00020");
  error_->setWordWrap(true);
  layout->addWidget(error_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &SettingsDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &SettingsDialog::reject);
  layout->addWidget(buttons);
  resize(640, 560);
}

void SettingsDialog::accept() {
  SettingOverrides o;
  for (const auto& [name, editor] : editors_) {
    const SettingSpec* s = find_setting(name);
    std::string text;
    if (auto* c = qobject_cast<QCheckBox*>(editor))
      text = c->isChecked() ? "on" : "off";
    else if (auto* t = qobject_cast<QPlainTextEdit*>(editor))
      text = t->toPlainText().toStdString();
    else if (auto* l = qobject_cast<QLineEdit*>(editor))
      text = l->text().trimmed().toStdString();
    // Only what differs from the engine's default is kept (a list's default is empty).
    if (s && text != s->fallback) o.set(name, text);
  }
  Settings check;
  std::string error;
  if (!o.apply(check, error)) {
    error_->setText(QString::fromStdString(error));
    return;
  }
  result_ = o;
  QDialog::accept();
}

}  // namespace rdmatel::ui
