# Exercise s1_03_tokenizers (§1.3): replace each `raise NotImplementedError` with your code.
"""§1.3 Word-level and character-level tokenization.

A tokenizer cuts text into tokens and gives each token an id: its position in a vocabulary
built from training text. A word tokenizer has one token per word (or punctuation mark): a
big vocabulary, short sequences, and every word it has not seen becomes the unknown token.
A character tokenizer has one token per character: a tiny vocabulary, long sequences
("Hello, world!" is 13 tokens), and no unknown words, only unknown characters.
"""
import re

UNK = "<unk>"  # the unknown token; it always has id 0


def split_words(text: str) -> list[str]:
    """The word-level tokens of `text`, in order (§1.3): each run of word characters (\\w+:
    letters, digits, underscore) is one token, each other non-space character is a token of
    its own, and whitespace is dropped. "Hello, world!" -> ["Hello", ",", "world", "!"]."""
    raise NotImplementedError('s1_03_tokenizers: one regular expression: a run of word characters, or one non-space character (in split_words)')


class WordTokenizer:
    """Word-level tokenizer (§1.3, figure 1.15).

    WordTokenizer(text) builds vocab = [UNK] + the distinct tokens of split_words(text), sorted,
    and stoi (token -> id, the index in vocab).
    encode(text) -> list of ids of split_words(text); a token not in vocab gets id 0 (UNK).
    decode(ids) -> the tokens joined by single spaces, except that no space goes before
    , . ! ? ; or : so that decode(encode("Hello, world!")) == "Hello, world!".
    """

    def __init__(self, text: str):
        raise NotImplementedError('s1_03_tokenizers: vocab = [UNK] + sorted distinct tokens; stoi maps each token to its index (in WordTokenizer.__init__)')

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError('s1_03_tokenizers: look each token up in stoi, 0 for an unknown token (in WordTokenizer.encode)')

    def decode(self, ids: list[int]) -> str:
        raise NotImplementedError('s1_03_tokenizers: join the tokens with spaces, then remove the space before each , . ! ? ; : mark (in WordTokenizer.decode)')


class CharTokenizer:
    """Character-level tokenizer (§1.3, figures 1.16-1.17).

    CharTokenizer(text) builds vocab = [UNK] + the distinct characters of text, sorted, and
    stoi (character -> id). encode(text) -> one id per character, 0 for a character not in
    vocab; decode(ids) -> the characters joined with nothing between them.
    """

    def __init__(self, text: str):
        raise NotImplementedError('s1_03_tokenizers: vocab = [UNK] + sorted distinct characters; stoi maps each to its index (in CharTokenizer.__init__)')

    def encode(self, text: str) -> list[int]:
        raise NotImplementedError('s1_03_tokenizers: one id per character, 0 for an unknown one (in CharTokenizer.encode)')

    def decode(self, ids: list[int]) -> str:
        raise NotImplementedError('s1_03_tokenizers: concatenate the characters (in CharTokenizer.decode)')


def token_counts(text: str) -> dict[str, int]:
    """How many tokens `text` becomes under each scheme (§1.3, figure 1.17), as a dict:
      "characters"        one token per character
      "bytes"             one token per byte of its UTF-8 encoding (256 possible values)
      "whitespace_words"  pieces between whitespace (str.split())
      "words"             split_words(text): words and punctuation marks
    """
    raise NotImplementedError('s1_03_tokenizers: count each way and return the four numbers under these keys (in token_counts)')
