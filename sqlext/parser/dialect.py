"""``HudiSpark``: sqlglot's Spark dialect extended with the statements Hudi adds to Spark SQL.

Extended the way sqlglot's own dialects extend their parents: new entries in the parser's statement,
``SHOW`` and ``ALTER TABLE`` tables, and a few overridden rules, each producing a node of this module
(:class:`HudiCall`, :class:`HudiCompaction`, :class:`ShowPartitions`, :class:`ShowCreateTable`,
:class:`UnsetProperties`, :class:`ChangeColumn`) or of sqlglot's own expression classes.

What it adds to the Spark dialect:

* ``CALL [catalog.][system.]name(arg => value, ... | value, ...)`` (Hudi ``CallProcedureHoodieCommand``);
* ``RUN | SCHEDULE COMPACTION|CLUSTERING ON t | 'path' [AT instant]`` and ``SHOW COMPACTION|CLUSTERING ON t |
  'path' [LIMIT n]``
  (Hudi ``CompactionHoodieTableCommand`` / ``CompactionShowHoodieTableCommand``);
* ``SHOW PARTITIONS t [PARTITION (...)]`` and ``SHOW CREATE TABLE t [AS SERDE]`` as trees (sqlglot keeps them
  as opaque commands);
* ``ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] (k, ...)``, ``ALTER TABLE t CHANGE [COLUMN] ...`` in all of
  Spark's forms, ``ALTER TABLE t DROP [IF EXISTS] PARTITION (...)[, ...] [PURGE]``;
* ``INSERT ... PARTITION (...) IF NOT EXISTS`` and Spark's rule that ``INSERT`` needs ``INTO`` or ``OVERWRITE``.

Errors: every syntax error is raised at once as :class:`PositionedParseError`, a sqlglot ``ParseError``
that also carries the character offset of the offending token (or the end of the text), so the caller can
give line, column and a caret (``sqlext.errors.SqlParseError``).
"""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel, ParseError
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokens import Token, TokenType
from sqlglot.trie import new_trie


class PositionedParseError(ParseError):
    """A syntax error at a known place.

    Attributes:
        description: what is wrong, in Spark's words where Spark has them (``Expected ')' but found 'b'``).
        offset: 0-based character offset in the parsed text of the offending token, or the text's length
            when the statement ended too early.
    """

    def __init__(self, description: str, offset: int) -> None:
        super().__init__(description)
        self.description = description
        self.offset = offset


# ---------------------------------------------------------------------------- nodes sqlglot does not have


class HudiCall(exp.Expression):
    """``CALL name(args)``: ``this`` is the procedure name as written (``exp.Table`` of its parts),
    ``expressions`` the arguments (``exp.Kwarg`` for ``name => value``, else the value)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": False}


class HudiCompaction(exp.Expression):
    """``RUN|SCHEDULE|SHOW COMPACTION|CLUSTERING ON t | 'path' [AT instant] [LIMIT n]``: ``this`` is the kind
    (``exp.Var``: RUN, SCHEDULE, SHOW), ``service`` the service (``exp.Var``: COMPACTION, CLUSTERING; absent =
    COMPACTION), ``table`` an ``exp.Table`` or ``path`` an ``exp.Literal``."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True, "table": False, "path": False, "instant": False, "limit": False, "service": False}


class ShowPartitions(exp.Expression):
    """``SHOW PARTITIONS t [PARTITION (...)]``: ``this`` the table, ``partition`` an ``exp.Partition``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "partition": False}


class ShowCreateTable(exp.Expression):
    """``SHOW CREATE TABLE t [AS SERDE]``: ``this`` the table, ``serde`` True with ``AS SERDE``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "serde": False}


class UnsetProperties(exp.Expression):
    """``UNSET TBLPROPERTIES [IF EXISTS] (k, ...)`` action of ALTER TABLE: ``expressions`` the keys
    (``exp.Literal`` strings), ``exists`` True with ``IF EXISTS``."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True, "exists": False}


class ChangeColumn(exp.Expression):
    """``CHANGE [COLUMN] a[.b] ...`` action of ALTER TABLE in Spark's forms: ``this`` the column
    (``exp.Column``), then either ``to`` (new name, Hive form with ``dtype``) or any of ``dtype``,
    ``comment``, ``position`` (``exp.ColumnPosition``), ``nullable`` (``exp.Boolean``)."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True, "to": False, "dtype": False, "comment": False, "position": False, "nullable": False}


# ---------------------------------------------------------------------------- the dialect


def _end_offset(parser: Any) -> int:
    tokens = parser._tokens
    return (tokens[-1].end + 1) if tokens else 0


class HudiSpark(Spark):
    """sqlglot's Spark dialect plus Hudi's statements (see the module doc)."""

    class Tokenizer(Spark.Tokenizer):
        # SHOW is parsed (SHOW PARTITIONS / CREATE TABLE / COMPACTION), not swallowed as a command.
        COMMANDS = Spark.Tokenizer.COMMANDS - {TokenType.SHOW}
        # CALL is Hudi's procedure call, parsed here (sqlglot would keep it as an opaque command).
        KEYWORDS = {k: v for k, v in Spark.Tokenizer.KEYWORDS.items() if k != "CALL"}

    class Parser(SparkParser):
        STATEMENT_PARSERS: ClassVar[dict[TokenType, Any]] = {
            **SparkParser.STATEMENT_PARSERS,
            TokenType.SHOW: lambda self: self._parse_show(),
        }

        SHOW_PARSERS: ClassVar[dict[str, Any]] = {
            "PARTITIONS": lambda self: self._parse_show_partitions(),
            "CREATE TABLE": lambda self: self._parse_show_create_table(),
            "COMPACTION": lambda self: self._parse_compaction("SHOW"),
            "CLUSTERING": lambda self: self._parse_compaction("SHOW", "CLUSTERING"),
        }
        SHOW_TRIE = new_trie(key.split(" ") for key in SHOW_PARSERS)

        ALTER_PARSERS: ClassVar[dict[str, Any]] = {
            **SparkParser.ALTER_PARSERS,
            "CHANGE": lambda self: self._parse_change_column(),
            "UNSET": lambda self: self._parse_unset_properties(),
            "SET": lambda self: self._parse_set_properties(),
            "ALTER": lambda self: self._parse_change_column(),
        }

        def __init__(self, **kwargs: Any) -> None:
            kwargs["error_level"] = ErrorLevel.IMMEDIATE
            super().__init__(**kwargs)

        # ------------------------------------------------------------------ errors

        def raise_error(self, message: str, token: Token | None = None) -> None:
            """Raise at once with the offending token's offset (the end of the text when the statement
            ended early); sqlglot's messages are reworded as Spark's parser words them."""
            at_end = not self._curr and (not token or token is self._prev)
            offset = _end_offset(self) if at_end else (token or self._curr or self._prev).start
            found = "the end of the statement" if at_end else repr((token or self._curr).text)
            if message.startswith("Expecting "):
                wanted = message[len("Expecting "):].strip()
                shown = wanted if wanted[:1].isalpha() else repr(wanted)
                message = f"Expected {shown} but found {found}"
            elif message.startswith("Expected table name"):
                message = f"Expected a table name but found {found}"
            elif message.startswith(("Required keyword", "Invalid expression", "Unexpected token", "Unknown option")):
                message = f"Syntax error at or near {found}"
            raise PositionedParseError(message, offset)

        def fail(self, message: str, token: Token | None = None) -> NoReturn:
            """Raise a syntax error with ``message`` as given at ``token`` (default: the current token, or the
            end of the statement when there is none)."""
            if token:
                raise PositionedParseError(message, token.start)
            raise PositionedParseError(message, self._curr.start if self._curr else _end_offset(self))

        def _found(self) -> str:
            return f"found {self._curr.text!r}" if self._curr else "reached the end of the statement"

        def _parse_function_call(self, *args: Any, **kwargs: Any) -> Any:
            """``map(k, v, ...)`` with an odd number of arguments is refused by name (sqlglot would fail on it)."""
            start = self._curr
            if start and start.text.upper() == "MAP" and self._next and self._next.token_type == TokenType.L_PAREN:
                depth, commas, empty = 0, 0, True
                for tok in self._tokens[self._index + 1:]:
                    if tok.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
                        depth += 1
                    elif tok.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
                        depth -= 1
                        if depth == 0:
                            break
                    elif depth == 1:
                        empty = False
                        commas += tok.token_type == TokenType.COMMA
                if not empty and commas % 2 == 0:
                    self.fail("map(...) needs an even number of arguments (key, value, ...)", start)
            return super()._parse_function_call(*args, **kwargs)

        # ------------------------------------------------------------------ statements led by a word

        def _parse_statement(self) -> exp.Expr | None:
            curr, nxt = self._curr, self._next
            word = curr.text.upper() if curr and curr.token_type == TokenType.VAR else ""
            if word == "CALL":
                self._advance()
                return self._parse_call()
            if word in ("RUN", "SCHEDULE") and nxt and nxt.text.upper() in ("COMPACTION", "CLUSTERING"):
                service = nxt.text.upper()
                self._advance(2)
                return self._parse_compaction(word, service)
            return super()._parse_statement()

        def _parse_call(self) -> HudiCall:
            parts: list[exp.Expr] = []
            while True:
                part = self._parse_id_var(any_token=False)
                if part is None:
                    self.fail(f"Expected a procedure name but {self._found()}")
                parts.append(part)
                if not self._match(TokenType.DOT):
                    break
            if not self._match(TokenType.L_PAREN):
                self.fail(f"Expected '(' after the procedure name but {self._found()}")
            args: list[exp.Expr] = []
            if not self._match(TokenType.R_PAREN):
                while True:
                    arg = self._parse_lambda()
                    if arg is None:
                        self.fail(f"Expected an argument but {self._found()}")
                    args.append(arg)
                    if self._match(TokenType.R_PAREN):
                        break
                    if not self._match(TokenType.COMMA):
                        self.fail(f"Expected ',' or ')' in the argument list but {self._found()}")
            return self.expression(HudiCall(this=exp.Dot.build(parts) if len(parts) > 1 else parts[0],
                                            expressions=args))

        def _parse_compaction(self, kind: str, service: str = "COMPACTION") -> HudiCompaction:
            if not self._match(TokenType.ON):
                self.fail(f"Expected ON but {self._found()}")
            node = HudiCompaction(this=exp.var(kind), service=exp.var(service))
            if self._curr and self._curr.token_type == TokenType.STRING:
                node.set("path", self._parse_string())
            else:
                node.set("table", self._parse_table_parts())
            if kind == "SHOW" and self._match(TokenType.LIMIT):
                if not self._curr or self._curr.token_type != TokenType.NUMBER:
                    self.fail(f"Expected a row limit (an integer) but {self._found()}")
                node.set("limit", self._parse_number())
            elif kind != "SHOW" and self._match_text_seq("AT"):
                if not self._curr or self._curr.token_type not in (TokenType.NUMBER, TokenType.STRING):
                    self.fail(f"Expected an instant time but {self._found()}")
                node.set("instant", self._parse_primary())
            return self.expression(node)

        # ------------------------------------------------------------------ SHOW

        def _parse_show_partitions(self) -> ShowPartitions:
            table = self._parse_table_parts()
            return self.expression(ShowPartitions(this=table, partition=self._parse_partition()))

        def _parse_show_create_table(self) -> ShowCreateTable:
            table = self._parse_table_parts()
            return self.expression(ShowCreateTable(this=table, serde=self._match_text_seq("AS", "SERDE")))

        # ------------------------------------------------------------------ ALTER TABLE

        def _parse_unset_properties(self) -> UnsetProperties:
            if not self._match_text_seq("TBLPROPERTIES"):
                self.fail(f"Expected TBLPROPERTIES but {self._found()}")
            exists = self._match_text_seq("IF", "EXISTS")
            keys = self._parse_spark_properties(values=False)
            return self.expression(UnsetProperties(expressions=keys, exists=exists))

        def _parse_property(self) -> Any:
            if self._match_text_seq("OPTIONS", "(", advance=False):
                self._advance()
                return self.expression(exp.OptionsProperty(expressions=self._parse_spark_properties()))
            if self._match_text_seq("TBLPROPERTIES", "(", advance=False):
                self._advance()
                return self._parse_spark_properties()
            return super()._parse_property()

        def _parse_set_properties(self) -> exp.Expression:
            if self._match_text_seq("TBLPROPERTIES"):
                properties = self._parse_spark_properties()
                return self.expression(exp.AlterSet(expressions=[exp.Properties(expressions=properties)]))
            return self._parse_alter_table_set()

        def _parse_spark_properties(self, values: bool = True) -> list[exp.Expr]:
            """Spark's ``propertyList``: ``(key [=] value, ...)`` with keys as strings or dotted identifiers and
            values as strings, numbers (text kept: ``1.50``) or booleans, as ``exp.Property`` nodes. Without
            ``values`` (``UNSET``) the keys alone (string literals), and a value is the error; with them a key
            without value is; both with Spark's messages."""
            if not self._match(TokenType.L_PAREN):
                self.fail(f"Expected '(' but {self._found()}")
            properties: list[exp.Expr] = []
            while True:
                start = self._curr
                key = self._parse_property_key()
                if key is None:
                    self.fail(f"Expected a property key but {self._found()}")
                if not values:
                    if self._curr and self._curr.token_type not in (TokenType.COMMA, TokenType.R_PAREN):
                        self.fail(f"Values should not be specified for key(s): {key.name}", start)
                    properties.append(key)
                    if self._match(TokenType.R_PAREN):
                        return properties
                    if not self._match(TokenType.COMMA):
                        self.fail(f"Expected ',' or ')' in the property list but {self._found()}")
                    continue
                self._match(TokenType.EQ)
                value: exp.Expr | None = None
                curr = self._curr
                if curr and curr.token_type in (TokenType.STRING, TokenType.NUMBER):
                    value = self._parse_primary()
                elif curr and curr.token_type in (TokenType.TRUE, TokenType.FALSE):
                    self._advance()
                    value = exp.Boolean(this=curr.token_type == TokenType.TRUE)
                elif curr and curr.token_type == TokenType.DASH and self._next:
                    value = self._parse_unary()
                if value is None:
                    self.fail(f"Values must be specified for key(s): {key.name}", start)
                properties.append(self.expression(exp.Property(this=key, value=value)))
                if self._match(TokenType.R_PAREN):
                    return properties
                if not self._match(TokenType.COMMA):
                    self.fail(f"Expected ',' or ')' in the property list but {self._found()}")

        def _parse_property_key(self) -> exp.Literal | None:
            """A property key: a string, or dotted identifiers (``hoodie.index.type``), as one string literal."""
            if not self._curr:
                return None
            if self._curr.token_type == TokenType.STRING:
                key = self._parse_string()
                return key if isinstance(key, exp.Literal) else None
            parts: list[str] = []
            while self._curr and self._curr.token_type not in (
                    TokenType.EQ, TokenType.COMMA, TokenType.R_PAREN, TokenType.L_PAREN, TokenType.STRING):
                if self._curr.token_type == TokenType.DOT:
                    parts.append(".")
                else:
                    parts.append(self._curr.text)
                self._advance()
                if self._curr and self._curr.token_type != TokenType.DOT and parts[-1] != ".":
                    break
            return exp.Literal.string("".join(parts)) if parts else None

        def _parse_change_column(self) -> ChangeColumn:
            self._match(TokenType.COLUMN)
            column = self._parse_column()
            if column is None:
                self.fail("Expected a column name")
            node = ChangeColumn(this=column)
            if self._match_text_seq("TYPE"):
                node.set("dtype", self._parse_types(schema=True))
            elif self._match(TokenType.COMMENT):
                node.set("comment", self._parse_string())
            elif self._match_text_seq("SET", "NOT", "NULL"):
                node.set("nullable", exp.false())
            elif self._match_text_seq("DROP", "NOT", "NULL"):
                node.set("nullable", exp.true())
            elif self._curr and self._curr.text.upper() in ("FIRST", "AFTER"):
                pass
            elif self._curr:
                node.set("to", self._parse_id_var(any_token=False))
                node.set("dtype", self._parse_types(schema=True))
                if self._match(TokenType.COMMENT):
                    node.set("comment", self._parse_string())
            if self._curr and self._curr.text.upper() in ("FIRST", "AFTER"):
                position = self._curr.text.upper()
                self._advance()
                node.set("position", self.expression(exp.ColumnPosition(
                    this=self._parse_column() if position == "AFTER" else None, position=position)))
            return self.expression(node)

        def _parse_alter_table_drop(self) -> list[exp.Expr]:
            if self._match_texts(("COLUMN", "COLUMNS")):
                exists = self._match_text_seq("IF", "EXISTS")
                wrapped = self._match(TokenType.L_PAREN)
                columns = self._parse_csv(self._parse_column)
                if wrapped and not self._match(TokenType.R_PAREN):
                    self.fail(f"Expected ')' but {self._found()}")
                return [self.expression(exp.Drop(kind="COLUMNS", expressions=columns, exists=exists))]
            actions = super()._parse_alter_table_drop()
            if self._match_text_seq("PURGE"):
                for action in actions:
                    action.meta["purge"] = True
            return actions

        # ------------------------------------------------------------------ INSERT

        def _parse_insert(self) -> exp.Insert | exp.MultitableInserts:
            if not (self._match(TokenType.INTO, advance=False) or self._match(TokenType.OVERWRITE, advance=False)):
                self.fail(f"Expected INTO but {self._found()}")
            return super()._parse_insert()

        def _parse_delete(self) -> exp.Delete:
            if not self._match(TokenType.FROM, advance=False):
                self.fail(f"Expected FROM but {self._found()}")
            return super()._parse_delete()

        # ------------------------------------------------------------------ MERGE

        def _parse_when_matched(self) -> exp.Whens:
            """Spark's ``matchedClause* notMatchedClause* notMatchedBySourceClause*`` with their actions only
            (``UPDATE SET * | assignments``, ``DELETE``, ``INSERT * | (cols) VALUES (values)``); each
            ``exp.When`` keeps the offset of its ``WHEN`` in ``meta["start"]``."""
            whens: list[exp.Expr] = []
            while self._match(TokenType.WHEN):
                when_token = self._prev
                matched = not self._match(TokenType.NOT)
                if not self._match_text_seq("MATCHED"):
                    self.fail(f"Expected MATCHED or NOT MATCHED but {self._found()}")
                by_source = False
                if not matched and self._match_text_seq("BY"):
                    if self._match_text_seq("SOURCE"):
                        by_source = True
                    elif not self._match_text_seq("TARGET"):
                        self.fail(f"Expected SOURCE or TARGET but {self._found()}")
                condition = self._parse_disjunction() if self._match(TokenType.AND) else None
                if not self._match(TokenType.THEN):
                    self.fail(f"Expected THEN but {self._found()}")
                then: exp.Expr | None = None
                if (matched or by_source) and self._match(TokenType.DELETE):
                    then = exp.var("DELETE")
                elif (matched or by_source) and self._match(TokenType.UPDATE):
                    if not self._match(TokenType.SET):
                        self.fail(f"Expected SET but {self._found()}")
                    if matched and self._match(TokenType.STAR):
                        then = exp.Update(expressions=[exp.Star()])
                    else:
                        then = exp.Update(expressions=self._parse_csv(self._parse_update_assignment))
                elif not matched and not by_source and self._match(TokenType.INSERT):
                    if self._match(TokenType.STAR):
                        then = exp.Insert(this=exp.Star())
                    else:
                        columns = self._parse_value(values=False)
                        if not self._match(TokenType.VALUES):
                            self.fail(f"Expected VALUES but {self._found()}")
                        then = exp.Insert(this=columns, expression=self._parse_value())
                else:
                    wanted = "INSERT" if not matched and not by_source else "UPDATE or DELETE"
                    self.fail(f"Expected {wanted} but {self._found()}")
                when = self.expression(exp.When(matched=matched, source=by_source, condition=condition, then=then))
                when.meta["start"] = when_token.start
                whens.append(when)
            if not whens:
                self.fail(f"Expected a WHEN MATCHED or WHEN NOT MATCHED clause but {self._found()}")
            return self.expression(exp.Whens(expressions=whens))

        def _parse_partition(self) -> exp.Partition | None:
            partition = super()._parse_partition()
            if partition is not None and self._match_text_seq("IF", "NOT", "EXISTS"):
                partition.meta["if_not_exists"] = True
            return partition
