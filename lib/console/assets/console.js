// quickrealm review console: progressive enhancement only (every page works without it).
for (const select of document.querySelectorAll('select.auto-submit')) {
  if (!(select instanceof HTMLSelectElement)) continue;
  select.addEventListener('change', () => select.form?.requestSubmit());
}
