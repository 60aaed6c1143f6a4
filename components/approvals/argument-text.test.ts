import { describe, expect, it } from 'vitest';
import { argumentsNoteView, foldText, maskedParts, unusualCharacters } from './argument-text';

describe('maskedParts', () => {
  it('tells masked placeholders from the text around them', () => {
    expect(maskedParts('Call [masked:phone] or write to [masked:email].')).toEqual([
      { text: 'Call ', masked: false },
      { text: '[masked:phone]', masked: true },
      { text: ' or write to ', masked: false },
      { text: '[masked:email]', masked: true },
      { text: '.', masked: false },
    ]);
    expect(maskedParts('[masked:secret]')).toEqual([{ text: '[masked:secret]', masked: true }]);
    expect(maskedParts('')).toEqual([{ text: '', masked: false }]);
    // Only the masker's own shape: other brackets are text.
    expect(maskedParts('[masked:Email] [note]')).toEqual([{ text: '[masked:Email] [note]', masked: false }]);
  });
});

describe('foldText', () => {
  it('leaves short text and up to three lines as they are', () => {
    expect(foldText('12.50 EUR')).toEqual({ folded: false, head: '12.50 EUR' });
    expect(foldText('x'.repeat(200))).toEqual({ folded: false, head: 'x'.repeat(200) });
    expect(foldText('one\ntwo\nthree')).toEqual({ folded: false, head: 'one\ntwo\nthree' });
  });

  it('folds over 200 characters or over three lines', () => {
    expect(foldText('x'.repeat(201))).toEqual({ folded: true, head: 'x'.repeat(200) });
    expect(foldText('one\ntwo\nthree\nfour')).toEqual({ folded: true, head: 'one\ntwo\nthree' });
    expect(foldText(`${'a'.repeat(250)}\nb`)).toEqual({ folded: true, head: 'a'.repeat(200) });
    // At the end of a word when one ends in the last 24 characters.
    const words = `${'word '.repeat(36)}returned on 2 December 2026`;
    expect(foldText(words).head).toBe(`${'word '.repeat(36)}returned on 2`);
    const far = `${'w'.repeat(170)} ${'x'.repeat(40)}`;
    expect(foldText(far).head).toBe(`${'w'.repeat(170)} ${'x'.repeat(29)}`);
  });

  it('never cuts a placeholder or an emoji in half', () => {
    const text = `${'a'.repeat(195)}[masked:email] and more text after it`;
    expect(foldText(text).head).toBe(`${'a'.repeat(195)}[masked:email]`);
    const emoji = '😀'.repeat(201);
    expect(foldText(emoji).head).toBe('😀'.repeat(200));
  });
});

describe('unusualCharacters', () => {
  it('spells out what is not printable ASCII, once each', () => {
    expect(unusualCharacters('amount')).toEqual([]);
    expect(unusualCharacters('\u0430mount')).toEqual(['“а” U+0430']);
    expect(unusualCharacters('a\u200bmo\u200bunt')).toEqual(['U+200B']);
    expect(unusualCharacters('ＡＢ')).toEqual(['“Ａ” U+FF21', '“Ｂ” U+FF22']);
  });
});

describe('argumentsNoteView', () => {
  const when = (d: Date) => `<${d.toISOString().slice(0, 16)}>`;

  it('warns when the agent sent none, whatever the note', () => {
    const warn = {
      tone: 'warn',
      text: 'The agent sent no arguments: you would approve its own description of the call, not the call itself. Nothing here shows what will run.',
    };
    expect(argumentsNoteView('not sent by the agent', false, when)).toEqual(warn);
    expect(argumentsNoteView(null, false, when)).toEqual(warn);
  });

  it('says who may see them, and when they were erased in the page’s own time format', () => {
    expect(argumentsNoteView(null, true, when)).toBeNull();
    expect(argumentsNoteView('reviewers only', true, when)).toEqual({
      tone: 'neutral',
      text: 'Only reviewers and admins see the arguments.',
    });
    expect(argumentsNoteView('erased when denied at 2026-12-07T10:15:30.123Z', true, when)).toEqual({
      tone: 'neutral',
      text: 'Arguments erased when denied at <2026-12-07T10:15>; their digest stays.',
    });
    expect(argumentsNoteView('erased when its grant was redeemed at 2026-12-07T10:15:30Z', true, when)?.text).toBe(
      'Arguments erased when its grant was redeemed at <2026-12-07T10:15>; their digest stays.',
    );
    expect(argumentsNoteView('something new', true, when)).toEqual({ tone: 'neutral', text: 'Something new.' });
  });
});
