/**
 * What a screen model says apart from the words in it: redaction masks the
 * text of drafts, questions and option labels with the same length, and
 * must change nothing else.
 */
import type { ScreenModel } from "../../../src/tmux/screen-types.js";

export function screenShape(model: ScreenModel): unknown {
  return {
    state: model.state,
    composer: model.composer,
    mode: model.mode,
    model: model.model,
    draftLength: model.draft?.length ?? null,
    prompt:
      model.prompt === null
        ? null
        : {
            kind: model.prompt.kind,
            keys: model.prompt.keys,
            pointer: model.prompt.pointer,
            questionLength: model.prompt.question?.length ?? null,
            options: model.prompt.options.map((o) => [o.number, o.label.length]),
          },
  };
}
