"""DML statements from ``HudiSpark`` trees: INSERT INTO/OVERWRITE, MERGE INTO, UPDATE, DELETE FROM (Hudi's
``InsertIntoHoodieTableCommand``, ``MergeIntoHoodieTableCommand``, ``UpdateHoodieTableCommand``,
``DeleteHoodieTableCommand``).

Expressions (conditions, assigned values, INSERT values) are Spark SQL regenerated from the tree by sqlglot's Spark
generator; queries Spark runs (INSERT's query, MERGE's source query) are the text as written.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.tokens import TokenType

from sqlext.errors import UnsupportedStatement
from sqlext.parser import statements as st
from sqlext.parser.build_ddl import partition_spec
from sqlext.parser.source import Source, expr_sql, name_parts, table_ident

sql = expr_sql


def _qualifiers(table: st.TableIdent, alias: str | None) -> list[list[str]]:
    """Name prefixes that designate ``table`` in column references (lower-case parts)."""
    if alias is not None:
        return [[alias.lower()]]
    quals = [[table.name.lower()]]
    if table.db is not None:
        quals.append([table.db.lower(), table.name.lower()])
        if table.catalog is not None:
            quals.append([table.catalog.lower(), table.db.lower(), table.name.lower()])
    return quals


def _strip_qualifier(parts: list[str], qualifiers: list[list[str]]) -> list[str]:
    """``parts`` of a column reference without a leading qualifier of the table (longest first)."""
    lowered = [p.lower() for p in parts]
    for qual in sorted(qualifiers, key=len, reverse=True):
        if len(lowered) > len(qual) and lowered[: len(qual)] == qual:
            return parts[len(qual):]
    return parts


def _alias(table: exp.Expr) -> str | None:
    alias = table.args.get("alias")
    return alias.name if alias is not None and alias.name else None


def _assignments(src: Source, items: list[exp.Expr], quals: list[list[str]]) -> tuple[st.Assignment, ...]:
    result: list[st.Assignment] = []
    for item in items:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, (exp.Column, exp.Dot)):
            raise src.error_at_node(item, f"Expected column = value but found {sql(item)!r}")
        column = ".".join(_strip_qualifier(name_parts(item.this), quals))
        result.append((column, sql(item.expression)))
    return tuple(result)


# ---------------------------------------------------------------------------- INSERT


def build_insert(src: Source, tree: exp.Insert) -> st.Statement | None:
    """``[WITH ...] INSERT INTO|OVERWRITE [TABLE] t [PARTITION (...) [IF NOT EXISTS]] [(cols) | BY NAME] query``;
    None for ``INSERT OVERWRITE [LOCAL] DIRECTORY`` and ``INSERT INTO t REPLACE WHERE`` (Spark's)."""
    target = tree.this
    if isinstance(target, exp.Directory) or tree.args.get("where") is not None:
        return None
    table = target.this if isinstance(target, exp.Schema) else target
    columns = tuple(c.name for c in target.expressions) if isinstance(target, exp.Schema) else None
    partition = table.args.get("partition")
    if tree.args.get("expression") is None and tree.args.get("source") is None:
        raise src.error("Expected a query (SELECT, VALUES, WITH, FROM or TABLE) but reached the end of the statement")
    insert_at = next(i for i, tok in src.depth0() if tok.token_type == TokenType.INSERT)
    start = src.query_from(_after_table_name(src, insert_at))
    if start is None:
        raise src.error("Expected a query (SELECT, VALUES, WITH, FROM or TABLE)")
    query_sql = src.slice(start, len(src.tokens) - 1)
    if tree.args.get("with_") is not None:
        query_sql = f"{src.slice(0, insert_at - 1)} {query_sql}"
    line, column = src.position_in_statement(start)
    return st.InsertInto(
        table_ident(table), bool(tree.args.get("overwrite")), partition_spec(src, partition), columns, query_sql,
        if_not_exists=bool(partition is not None and partition.meta.get("if_not_exists")),
        by_name=bool(tree.args.get("by_name")), query_line=line, query_column=column)


def _after_table_name(src: Source, insert_at: int) -> int:
    """Index of the first token after ``INSERT INTO|OVERWRITE [TABLE] name``."""
    i = insert_at + 1
    while i < len(src.tokens) and src.tokens[i].text.upper() in ("INTO", "OVERWRITE", "TABLE"):
        i += 1
    i += 1
    while i + 1 < len(src.tokens) and src.tokens[i].token_type == TokenType.DOT:
        i += 2
    return i


# ---------------------------------------------------------------------------- UPDATE / DELETE


def build_update(src: Source, tree: exp.Update) -> st.Statement:
    """``UPDATE t [[AS] alias] SET col = expr, ... [WHERE cond]``."""
    table = tree.this
    ident, alias = table_ident(table), _alias(table)
    items = tree.expressions
    if not items:
        raise src.error("Expected a column name but reached the end of the statement")
    if src.tokens[-1].token_type == TokenType.COMMA:
        raise src.error("Expected a column name but reached the end of the statement")
    where = tree.args.get("where")
    return st.UpdateTable(ident, alias, _assignments(src, items, _qualifiers(ident, alias)),
                          sql(where.this) if where is not None else None)


def build_delete(src: Source, tree: exp.Delete) -> st.Statement:
    """``DELETE FROM t [[AS] alias] [WHERE cond]``."""
    table = tree.this
    where = tree.args.get("where")
    return st.DeleteFrom(table_ident(table), _alias(table), sql(where.this) if where is not None else None)


# ---------------------------------------------------------------------------- MERGE


def build_merge(src: Source, tree: exp.Merge) -> st.Statement:
    """``MERGE INTO target [[AS] t] USING source [[AS] s[(cols)]] ON cond WHEN ...``.

    Raises:
        SqlParseError: ON missing; matched clauses after not-matched ones (or NOT MATCHED BY SOURCE before either);
            a clause without condition that is not the last of its kind; INSERT column/value count mismatch.
    """
    target = tree.this
    ident, target_alias = table_ident(target), _alias(target)
    whens = tree.args["whens"].expressions if tree.args.get("whens") else []
    if not tree.args.get("on"):
        offset = whens[0].meta.get("start") if whens else None
        found = "'WHEN'" if whens else "the end of the statement"
        raise src.error(f"Expected ON but found {found}", offset)
    if not whens:
        raise src.error("Expected a WHEN MATCHED or WHEN NOT MATCHED clause but reached the end of the statement")
    using = tree.args["using"]
    source_alias = _alias(using)
    alias_node = using.args.get("alias")
    source_columns = tuple(c.name for c in alias_node.columns) if alias_node is not None and alias_node.columns else None
    source_table: st.TableIdent | None = None
    if isinstance(using, exp.Table) and not isinstance(using.this, (exp.Subquery, exp.Values)):
        source_table = table_ident(using)
        source_sql = source_table.sql
        if using.args.get("version") is not None:
            source_sql = f"{source_sql} {sql(using.args['version'])}"
    else:
        using_at = next(i for i, tok in src.depth0() if tok.token_type == TokenType.USING)
        if src.tokens[using_at + 1].token_type != TokenType.L_PAREN:
            raise src.error_at_node(using, "Expected the source table or a parenthesized query")
        source_sql = src.slice(using_at + 1, src.group_end(using_at + 1))
    on = tree.args["on"]
    target_quals = _qualifiers(ident, target_alias)
    source_quals = (_qualifiers(source_table, source_alias) if source_table
                    else ([[source_alias.lower()]] if source_alias else []))
    equalities, other = _split_on(on, target_quals, source_quals)
    clauses = _clauses(src, whens, target_quals)
    return st.MergeInto(ident, target_alias, source_sql, source_alias, sql(on), tuple(equalities), tuple(other),
                        clauses, source_table=source_table, source_columns=source_columns)


_ORDER = {"MATCHED": 0, "NOT MATCHED": 1, "NOT MATCHED BY SOURCE": 2}


def _clauses(src: Source, whens: list[exp.Expr], quals: list[list[str]]) -> tuple[st.MergeClause, ...]:
    clauses: list[st.MergeClause] = []
    last_kind = 0
    unconditioned: dict[str, bool] = {}
    for when in whens:
        kind = ("MATCHED" if when.args.get("matched")
                else "NOT MATCHED BY SOURCE" if when.args.get("source") else "NOT MATCHED")
        start = when.meta.get("start")
        if _ORDER[kind] < last_kind:
            later = next(k for k, v in _ORDER.items() if v == last_kind)
            raise src.error(f"WHEN {kind} clauses must come before WHEN {later} clauses", start)
        last_kind = _ORDER[kind]
        if unconditioned.get(kind):
            raise src.error(f"Only the last WHEN {kind} clause can omit the condition", start)
        condition = sql(when.args["condition"]) if when.args.get("condition") is not None else None
        unconditioned[kind] = condition is None
        then = when.args["then"]
        if isinstance(then, exp.Var):
            clauses.append(st.WhenMatchedDelete(condition) if kind == "MATCHED"
                           else st.WhenNotMatchedBySourceDelete(condition))
        elif isinstance(then, exp.Update):
            star = len(then.expressions) == 1 and isinstance(then.expressions[0], exp.Star)
            assignments = None if star else _assignments(src, then.expressions, quals)
            if kind == "MATCHED":
                clauses.append(st.WhenMatchedUpdate(condition, assignments))
            else:
                assert assignments is not None
                clauses.append(st.WhenNotMatchedBySourceUpdate(condition, assignments))
        else:
            clauses.append(_insert_clause(src, then, condition, quals, start))
    return tuple(clauses)


def _insert_clause(src: Source, then: exp.Expr, condition: str | None, quals: list[list[str]],
                   start: int | None) -> st.WhenNotMatchedInsert:
    if isinstance(then.this, exp.Star):
        return st.WhenNotMatchedInsert(condition, None, None)
    columns = tuple(".".join(_strip_qualifier(name_parts(c), quals)) for c in then.this.expressions)
    values = tuple(sql(v) for v in then.expression.expressions)
    if len(values) != len(columns):
        raise src.error(f"INSERT clause has {len(columns)} column(s) but {len(values)} value(s)", start)
    return st.WhenNotMatchedInsert(condition, columns, values)


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _column_parts(node: exp.Expr) -> list[str] | None:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Column) and isinstance(node.this, exp.Identifier):
        return [part.name for part in node.parts]
    return None


def _split_on(on: exp.Expr, target_quals: list[list[str]],
              source_quals: list[list[str]]) -> tuple[list[tuple[str, str]], list[str]]:
    """Split ON into ``(target_col, source_expr_sql)`` equalities and the other conjuncts.

    A side is a target column when it is a column qualified by the target (alias, or name when there is no alias);
    an unqualified column counts as the target side when the other side is not itself a target column (left side
    first when both are unqualified).
    """
    equalities: list[tuple[str, str]] = []
    other: list[str] = []

    def role(parts: list[str] | None) -> str:
        if parts is None:
            return "expr"
        if len(parts) == 1:
            return "bare"
        if _strip_qualifier(parts, target_quals) != parts:
            return "target"
        if _strip_qualifier(parts, source_quals) != parts:
            return "source"
        return "other"

    for node in _conjuncts(on):
        if isinstance(node, exp.EQ):
            left, right = node.left, node.right
            lparts, rparts = _column_parts(left), _column_parts(right)
            lrole, rrole = role(lparts), role(rparts)
            pick: tuple[list[str], exp.Expr] | None = None
            if lrole == "target" and lparts is not None:
                pick = (_strip_qualifier(lparts, target_quals), right)
            elif rrole == "target" and rparts is not None:
                pick = (_strip_qualifier(rparts, target_quals), left)
            elif lrole == "bare" and lparts is not None:
                pick = (lparts, right)
            elif rrole == "bare" and rparts is not None:
                pick = (rparts, left)
            if pick is not None:
                equalities.append((".".join(pick[0]), sql(pick[1])))
                continue
        other.append(sql(node))
    return equalities, other


def refuse_with_clause(tree: exp.Expr) -> None:
    """``WITH ... MERGE|UPDATE|DELETE`` is not Spark SQL either: refuse it by name."""
    if tree.args.get("with_") is not None:
        verb = ("MERGE" if isinstance(tree, exp.Merge) else "UPDATE" if isinstance(tree, exp.Update)
                else "DELETE")
        raise UnsupportedStatement(f"A WITH clause before {verb} is not supported")
