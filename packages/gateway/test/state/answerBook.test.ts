import { ANY_RESULT, AnswerBook, MAX_AWAITED } from '../../src/state/answerBook.js';

const LIST = { kind: 'list', surface: 'tools', cursor: undefined } as const;

describe('AnswerBook', () => {
  it('hands each awaited answer out once, also after the book emptied and filled again', () => {
    const book = new AnswerBook();
    expect(book.awaits('1')).toBe(false);
    expect(book.take('1')).toBeUndefined();
    book.expect('1', LIST);
    expect(book.peek('1')).toBe(LIST);
    expect(book.take('1')).toBe(LIST);
    expect(book.take('1')).toBeUndefined();
    expect(book.size).toBe(0);
    book.expect('1', ANY_RESULT);
    book.expect('2', LIST);
    expect(book.take('2')).toBe(LIST);
    expect(book.awaits('1')).toBe(true);
    expect(book.take('1')).toBe(ANY_RESULT);
    expect([book.size, book.awaits('1'), book.peek('2')]).toEqual([0, false, undefined]);
  });

  it(`forgets the oldest awaited request past ${MAX_AWAITED}`, () => {
    const book = new AnswerBook();
    for (let n = 0; n < MAX_AWAITED; n++) expect(book.expect(String(n), ANY_RESULT)).toBeUndefined();
    expect(book.expect('last', ANY_RESULT)).toBe('0');
    expect(book.size).toBe(MAX_AWAITED);
    expect(book.awaits('0')).toBe(false);
  });
});
