// The page around a lesson in place of the explorer (lesson-page.js `?lesson=retrieval`,
// noise-page.js `?lesson=noise`): the page in lesson mode, the back link after the lede, the
// lede and the page's strings in the lesson's language, the address kept in step with the
// lesson's state, the language switch, and the page marked ready once the lesson settled.
// Each lesson brings only what differs: how its state is written into the address (`encode`),
// its own strings (`text(lang, key)`) and its version.

/** Puts the page in lesson mode (no lesson links) and returns the element the lesson goes in. */
export function enterLessonMode() {
  document.body.classList.add('lesson-mode');
  for (const link of document.querySelectorAll('.lesson-link')) link.remove();
  return document.getElementById('explorer-host');
}

/**
 * The page's chrome for a lesson: `{ write, run }`. `write()` puts the lesson's state in the
 * address (the lesson's `onChange`, given before the lesson is made); `run(lesson, root)`
 * shows the chrome, wires the language switch, starts the lesson and marks the page ready.
 * `encode(state)` is the address (without `?`), `text(lang, key)` the lesson's strings (`lede`,
 * `back`), `version()` the version the footer shows, `translatePage` the page's.
 */
export function lessonChrome({ encode, text, version, translatePage }) {
  let lesson = null;
  const lede = document.querySelector('.lede');
  const back = document.createElement('a');
  back.className = 'lesson-back';
  back.href = location.pathname;
  const write = () => {
    if (!lesson) return;
    const url = `${location.pathname}?${encode(lesson.state)}`;
    if (url !== `${location.pathname}${location.search}`) history.replaceState(history.state, '', url);
  };
  const chrome = () => {
    const lang = lesson.state.lang;
    translatePage(lang, version(), '');
    lede.textContent = text(lang, 'lede');
    lede.title = lede.textContent;
    back.textContent = text(lang, 'back');
  };
  async function run(made, root) {
    lesson = made;
    lede.after(back);
    chrome();
    document.getElementById('lang-toggle').addEventListener('click', () => {
      lesson.set({ lang: lesson.state.lang === 'en' ? 'zh' : 'en' });
      chrome();
      write();
    });
    window.diffattn = { lesson, root, settled: () => lesson.settled() };
    await lesson.start();
    // What the lesson learned in starting (a model's version) shows.
    chrome();
    await lesson.settled();
    write();
    requestAnimationFrame(() => {
      document.body.dataset.ready = 'true';
    });
  }
  return { write, run };
}
