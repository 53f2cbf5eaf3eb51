// The example page's one behaviour: it reports the first explorer's `change` events (what a
// host would do to keep its own state, e.g. a URL), to show the event and its detail.

const first = document.getElementById('first');
const log = document.getElementById('first-log');
first?.addEventListener('change', (event) => {
  const { shift, heads, head } = event.detail;
  log.textContent = `change: shift = ${shift}, heads = ${heads}, head = ${head}`;
});
