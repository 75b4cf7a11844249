#!/usr/bin/env python3
"""Regenerates jinja_cases.json: small templates rendered by Python's jinja2
in the environment transformers compiles chat templates in, so that the Go
renderer can be compared construct by construct.

    python3 gen_jinja_cases.py > jinja_cases.json

Environment (as transformers.utils.chat_template_utils / tokenization_utils_base):
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
extensions=[generation tag, jinja2.ext.loopcontrols]); filter tojson =
json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False);
globals raise_exception and strftime_now (at a fixed time here). Variables:
tools=None and documents=None unless given, as apply_chat_template passes them.
"""

import json
import sys
from datetime import datetime

import jinja2
from jinja2.ext import Extension, loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2 import nodes

NOW = datetime(2024, 7, 5, 14, 3, 9)


class Generation(Extension):
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Generation, loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)

MSGS = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi there"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "  What is 2+2?\n"},
]
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer", "enum": [1, 3]}},
            "required": ["city"],
        },
    },
}
CALL_MSGS = MSGS[:2] + [
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
        {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
]
PARTS = [{"role": "user", "content": [{"type": "text", "text": "Look:"}, {"type": "image"}, {"type": "text", "text": "ok?"}]}]
DATA = {"s": "Hello World", "n": 7, "f": 2.5, "t": True, "z": None, "e": "", "l": [3, 1, 2],
        "d": {"b": 1, "a": [1, 2], "c": {"x": None}}, "u": "héllo wörld ß", "empty": {}, "el": []}

# (name, template, variables). Variables default to DATA plus messages=MSGS.
CASES = [
    # --- whitespace control -------------------------------------------------
    ("ws/trim_blocks", "{% if true %}\nyes\n{% endif %}\nend", {}),
    ("ws/lstrip_blocks", "a\n    {% if true %}\n    b\n    {% endif %}\nc", {}),
    ("ws/lstrip_not_vars", "a\n    {{ 'x' }}\n  {% if true %}y{% endif %}", {}),
    ("ws/minus_both", "a   {%- if true -%}   b   {%- endif -%}   c", {}),
    ("ws/var_minus", "a \n {{- 'x' -}} \n b", {}),
    ("ws/plus_disables_lstrip", "a\n    {%+ if true %}b{% endif %}", {}),
    ("ws/comment", "a\n  {# note #}\nb {#- x -#} c", {}),
    ("ws/comment_trim", "a\n{# c #}\nb", {}),
    ("ws/raw", "{% raw %}{{ not rendered }} {% if %}{% endraw %}!", {}),
    ("ws/trailing_newline", "x\n", {}),
    ("ws/two_trailing_newlines", "x\n\n", {}),
    ("ws/crlf", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc", {}),
    ("ws/loop_newlines", "{% for m in messages %}\n{{ m.role }}\n{% endfor %}\n", {}),
    ("ws/indented_loop", "<s>\n  {% for m in messages %}\n    {{ m.role }}: {{ m.content }}\n  {% endfor %}\n</s>", {}),
    ("ws/set_block_trim", "{% set x %}\n  inner\n{% endset %}[{{ x }}]", {}),
    ("ws/tab_lstrip", "a\n\t\t{% if true %}b{% endif %}", {}),
    ("ws/minus_var_newlines", "{{- '\\n' -}}\n\n{{- 'x' }}", {}),
    # --- literals and printing ----------------------------------------------
    ("lit/escapes", r"""{{ 'a\nb\tc\\d\'e\"f' }}|{{ "q\"q" }}""", {}),
    ("lit/hex_unicode_octal", r"""{{ '\x41\u00e9\101\U0001F600' }}""", {}),
    ("lit/unknown_escape", r"""{{ '\d\w\(' }}""", {}),
    ("lit/backslash_end", r"""{{ 'a\\' }}|{{ "\\" }}""", {}),
    ("lit/raw_newline", "{{ 'a\nb' }}", {}),
    ("lit/braces_in_string", "{{ '{{ x }}' }}{{ \"%}\" }}{% if '%}' %}ok{% endif %}", {}),
    ("lit/adjacent", "{{ 'a' 'b' \"c\" }}", {}),
    ("lit/unicode", "{{ 'héllo 😀' }}{{ u }}", {}),
    ("lit/none_bool", "{{ none }}|{{ None }}|{{ true }}|{{ False }}|{{ z }}", {}),
    ("lit/numbers", "{{ 1 }}|{{ 1.0 }}|{{ 1.5e3 }}|{{ 10 / 4 }}|{{ 0.1 + 0.2 }}|{{ 1e20 }}|{{ 1e-7 }}|{{ -0.0 }}|{{ 1_000 }}", {}),
    ("lit/list_dict_print", "{{ [1, 'a', none, true, 2.0] }}|{{ {'k': 'v', 'n': 1} }}|{{ d }}|{{ l }}", {}),
    ("lit/quote_repr", """{{ ["it's", 'say "hi"', 'both \\' "'] }}""", {}),
    ("lit/tuple", "{{ (1, 2) | length }}|{% for a in (1, 2) %}{{ a }}{% endfor %}", {}),
    ("lit/print_undefined", "[{{ nothing }}][{{ d.missing }}]", {}),
    ("lit/float_data", "{{ f }}|{{ f * 2 }}|{{ n / 7 }}", {}),
    # --- operators ----------------------------------------------------------
    ("op/arith", "{{ 7 + 3 }}|{{ 7 - 10 }}|{{ 7 * 3 }}|{{ 7 / 2 }}|{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ 2.0 ** 2 }}", {}),
    ("op/precedence", "{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 2 ** 3 ** 2 }}|{{ -2 ** 2 }}|{{ 10 - 2 - 3 }}", {}),
    ("op/string_repeat", "{{ 'ab' * 3 }}|{{ 3 * '-' }}|{{ '=' * 0 }}|{{ [1] * 2 }}", {}),
    ("op/concat", "{{ 'a' ~ 1 ~ none ~ true ~ nothing ~ 2.5 }}", {}),
    ("op/plus_strings", "{{ 'a' + 'b' }}|{{ s + '!' }}|{{ [1] + [2, 3] }}", {}),
    ("op/compare", "{{ 1 < 2 }}|{{ 'a' < 'b' }}|{{ 2 >= 2.0 }}|{{ 1 == 1.0 }}|{{ 'a' != 'b' }}|{{ [1, 2] == [1, 2] }}|{{ none == none }}|{{ z == none }}", {}),
    ("op/logic", "{{ true and 'x' }}|{{ 0 or 'y' }}|{{ '' or [] or 'z' }}|{{ not true }}|{{ not 0 }}|{{ not '' }}|{{ empty or 'empty dict is false' }}|{{ el or 'empty list is false' }}", {}),
    ("op/in", "{{ 'a' in 'cat' }}|{{ 2 in l }}|{{ 'b' in d }}|{{ 'q' not in d }}|{{ 'role' in messages[0] }}|{{ 'x' in ['x'] }}", {}),
    ("op/in_filtered", "{{ 'system' in messages|map(attribute='role')|list }}|{{ 3 in l|sort }}", {}),
    ("op/percent_format", "{{ '%s and %d' % ('x', 3) }}|{{ '%05.2f' % 3.14159 }}|{{ '%s' % 'solo' }}|{{ '%(a)s-%(b)s' % {'a': 1, 'b': 2} }}|{{ '%%|%r|%x' % ('q', 255) }}", {}),
    ("op/unary", "{{ -n }}|{{ +n }}|{{ -f }}|{{ - (1 + 2) }}", {}),
    ("op/bool_arith", "{{ true + 1 }}|{{ (1 == 1) + (2 == 2) }}", {}),
    ("op/ternary", "{{ 'yes' if t else 'no' }}|{{ 'yes' if z else 'no' }}|{{ 'only' if false }}|", {}),
    ("op/ternary_nested", "{{ ('a' if n > 5 else 'b') + '!' }}|{{ [1 if t else 2, 3] }}|{{ 'x' ~ ('y' if false else 'z') }}", {}),
    ("op/ternary_chain", "{{ 'a' if n < 0 else 'b' if n < 5 else 'c' }}", {}),
    ("op/ternary_in_call", "{{ s.split(' ' if t else ',') }}|{{ l|join(', ' if t else ';') }}", {}),
    ("op/ternary_set", "{% set x = 'p' if n == 7 else 'q' %}{{ x }}{% set y = 'r' if false %}[{{ y }}]", {}),
    ("op/ternary_set_chain", "{%- set x = 'a' if n < 0 else 'b' if n > 100 else 'c' -%}{{ x }}{% set ns = namespace(v=1) %}{% set ns.v = 2 if t else 3 %}{{ ns.v }}", {}),
    ("op/ternary_lazy", "{{ (messages[9].role if messages|length > 9 else 'short') }}|{{ [none if true else nothing.attr] }}|{{ 'x' if (1 if t else 0) else 'y' }}", {}),
    ("op/ternary_in_filter_arg", "{{ messages|map(attribute=('role' if t else 'content'))|first }}|{{ {'k': 'v' if t else 'w', 'z': 1}['k'] }}|{{ l[(0 if t else 1):] }}", {}),
    # --- indexing and slicing -------------------------------------------------
    ("idx/list", "{{ messages[0]['role'] }}|{{ messages[-1].role }}|{{ messages[-4].content }}|{{ l[1] }}", {}),
    ("idx/single_negative", "{{ messages[-1]['content'] }}", {"messages": MSGS[1:2]}),
    ("idx/out_of_range", "[{{ l[5] }}][{{ l[-5] }}]{{ l[5] is defined }}", {}),
    ("idx/string", "{{ u[1] }}{{ u[-1] }}{{ s[0] }}", {}),
    ("idx/dict", "{{ d['b'] }}|{{ d.b }}|{{ d['c']['x'] is none }}|{{ d.c.x is defined }}", {}),
    ("idx/slices", "{{ l[1:] }}|{{ l[:-1] }}|{{ l[::-1] }}|{{ l[::2] }}|{{ s[:5] }}|{{ s[-5:] }}|{{ u[::-1] }}|{{ messages[1:]|length }}", {}),
    ("idx/slice_loop", "{% for m in messages[1:] %}{{ m.role }},{% endfor %}|{% for m in messages[::-1] %}{{ loop.index0 }}{{ m.role[0] }}{% endfor %}", {}),
    ("idx/expr_index", "{% for m in messages %}{% if not loop.last %}{{ messages[loop.index0 + 1].role }},{% endif %}{% endfor %}", {}),
    ("idx/attr_on_missing", "{{ messages[0].nope is defined }}|{{ (messages[9] is defined) }}", {}),
    # --- loops ---------------------------------------------------------------
    ("loop/vars", "{% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}", {}),
    ("loop/prev_next", "{% for x in l %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}", {}),
    ("loop/cycle", "{% for x in l %}{{ loop.cycle('a', 'b') }}{% endfor %}", {}),
    ("loop/else", "{% for x in el %}{{ x }}{% else %}empty{% endfor %}", {}),
    ("loop/filter", "{% for m in messages if m.role == 'user' %}{{ loop.index }}:{{ m.content|trim }};{% endfor %}", {}),
    ("loop/break_continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("loop/nested", "{% for a in [1, 2] %}{% for b in 'xy' %}{{ a }}{{ b }}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}", {}),
    ("loop/scope", "{% set x = 1 %}{% for i in l %}{% set x = i %}{% endfor %}{{ x }}", {}),
    ("loop/namespace", "{% set ns = namespace(found=false, n=0) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.found = true %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{{ ns.found }}{{ ns.n }}", {}),
    ("loop/dict", "{% for k in d %}{{ k }},{% endfor %}|{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|{% for k, v in d|items %}{{ k }};{% endfor %}", {}),
    ("loop/dictsort", "{% for k, v in d|dictsort %}{{ k }};{% endfor %}", {}),
    ("loop/unpack_pairs", "{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }};{% endfor %}", {}),
    ("loop/string", "{% for c in 'abc' %}{{ c }}.{% endfor %}", {}),
    ("loop/range", "{{ range(3)|list }}|{{ range(1, 7, 2)|list }}|{{ range(5, 0, -2)|list }}|{% for i in range(2) %}{{ i }}{% endfor %}", {}),
    ("loop/if_inside_set", "{% for m in messages %}{% if loop.first %}{% set first = m.role %}{% endif %}{% endfor %}[{{ first }}]", {}),
    ("loop/if_scope_leaks", "{% if true %}{% set v = 'leaked' %}{% endif %}{{ v }}", {}),
    # --- filters --------------------------------------------------------------
    ("filter/length", "{{ l|length }}|{{ s|length }}|{{ u|length }}|{{ d|length }}|{{ messages|count }}|{{ el|length }}", {}),
    ("filter/trim", "[{{ '  a b \n'|trim }}][{{ 'xxaxx'|trim('x') }}][{{ messages[3].content|trim }}]", {}),
    ("filter/case", "{{ s|upper }}|{{ s|lower }}|{{ 'hello world'|title }}|{{ \"they're here\"|title }}|{{ 'hELLO'|capitalize }}|{{ u|upper }}", {}),
    ("filter/replace", "{{ s|replace('o', '0') }}|{{ 'aaa'|replace('a', 'b', 2) }}", {}),
    ("filter/default", "{{ nothing|default('dflt') }}|{{ z|default('dflt') }}|{{ e|default('dflt') }}|{{ e|default('dflt', true) }}|{{ nothing|d('d') }}|{{ d.missing|default('m') }}", {}),
    ("filter/join", "{{ l|join }}|{{ l|join(', ') }}|{{ messages|map(attribute='role')|join('/') }}|{{ [1, none, 'a']|join('-') }}", {}),
    ("filter/first_last", "{{ l|first }}|{{ l|last }}|{{ s|first }}|{{ messages|last|attr('role') }}", {}),
    ("filter/list", "{{ 'abc'|list }}|{{ d|list }}|{{ range(3)|list }}", {}),
    ("filter/map_select", "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|list }}|{{ messages|rejectattr('role', 'eq', 'user')|list|length }}|{{ l|select('odd')|list }}|{{ l|reject('odd')|list }}|{{ l|map('string')|join }}", {}),
    ("filter/selectattr_defined", "{{ CALL|selectattr('tool_calls', 'defined')|list|length }}|{{ CALL|selectattr('tool_calls')|list|length }}", {"CALL": CALL_MSGS}),
    ("filter/sort_unique", "{{ l|sort }}|{{ l|sort(reverse=true) }}|{{ [3, 1, 3, 2, 1]|unique|list }}|{{ l|reverse|list }}|{{ ['b', 'A', 'c']|sort }}", {}),
    ("filter/numbers", "{{ l|sum }}|{{ l|min }}|{{ l|max }}|{{ '42'|int }}|{{ '4.5'|float }}|{{ 2.567|round(2) }}|{{ -3|abs }}|{{ 2.5|int }}|{{ 'x'|int }}", {}),
    ("filter/string", "{{ 5|string + 'x' }}|{{ none|string }}|{{ l|string }}", {}),
    ("filter/misc", "{{ 'a b  c'|wordcount }}|{{ 'ab'|center(6) }}|[{{ 'x\ny'|indent(2) }}]|{{ 'hello world foo'|truncate(9) }}|{{ '<b>'|e }}", {}),
    ("filter/batch_slice", "{{ [1, 2, 3, 4, 5]|batch(2)|list }}|{{ [1, 2, 3]|batch(2, 'x')|list }}", {}),
    ("filter/chain", "{{ messages|map(attribute='content')|map('trim')|map('upper')|first }}", {}),
    ("filter/attr", "{{ messages[0]|attr('role') }}", {}),
    ("filter/items_empty", "{% for k, v in empty|items %}x{% endfor %}ok", {}),
    ("filter/tojson_basic", "{{ d|tojson }}|{{ l|tojson }}|{{ s|tojson }}|{{ z|tojson }}|{{ t|tojson }}|{{ f|tojson }}|{{ n|tojson }}", {}),
    ("filter/tojson_tool", "{{ TOOL|tojson }}", {"TOOL": TOOL}),
    ("filter/tojson_indent", "{{ TOOL|tojson(indent=4) }}|{{ el|tojson(indent=2) }}|{{ empty|tojson(indent=2) }}|{{ [1, [2]]|tojson(indent=0) }}", {"TOOL": TOOL}),
    ("filter/tojson_options", "{{ d|tojson(sort_keys=true) }}|{{ d|tojson(separators=(',', ':')) }}|{{ u|tojson(ensure_ascii=true) }}|{{ '😀'|tojson(ensure_ascii=true) }}", {}),
    ("filter/tojson_escapes", "{{ 'a\"b\\\\c\nd\te\x01</script>&'|tojson }}|{{ u|tojson }}", {}),
    ("filter/tojson_floats", "{{ [1.0, 0.1, 1e16, 1e15, 1e-5, 0.0001, 123456789.123, -2.5, 1e100]|tojson }}", {}),
    ("filter/tojson_literal_dict", "{{ {'b': 1, 'a': [true, none]}|tojson }}", {}),
    ("filter/tojson_args", "{% for tc in CALL[2].tool_calls %}{{ tc.function.arguments|tojson }};{% endfor %}", {"CALL": CALL_MSGS}),
    # --- tests ----------------------------------------------------------------
    ("test/defined", "{{ s is defined }}{{ nothing is defined }}{{ z is defined }}{{ nothing is undefined }}{{ d.c.x is defined }}{{ d.c.y is defined }}", {}),
    ("test/none", "{{ z is none }}{{ s is none }}{{ nothing is none }}{{ z is not none }}", {}),
    ("test/types", "{{ s is string }}{{ n is string }}{{ n is number }}{{ f is number }}{{ t is number }}{{ n is integer }}{{ t is integer }}{{ f is float }}{{ t is boolean }}{{ d is mapping }}{{ l is mapping }}", {}),
    ("test/iterable", "{{ l is iterable }}{{ s is iterable }}{{ d is iterable }}{{ n is iterable }}{{ l is sequence }}{{ s is sequence }}{{ n is sequence }}", {}),
    ("test/truefalse", "{{ t is true }}{{ 1 is true }}{{ false is false }}{{ 0 is false }}", {}),
    ("test/numbers", "{{ n is odd }}{{ n is even }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(4) }}", {}),
    ("test/compare", "{{ 1 is eq 1 }}{{ 'a' is ne 'b' }}{{ 3 is gt 2 }}{{ 'x' is in 'xyz' }}{{ s is lower }}{{ 'ABC' is upper }}", {}),
    ("test/content_kinds", "{% for m in P %}{% if m.content is string %}S{% elif m.content is iterable %}{% for c in m.content %}{% if c.type == 'text' %}{{ c.text }}{% else %}<{{ c.type }}>{% endif %}{% endfor %}{% endif %}{% endfor %}", {"P": PARTS}),
    ("test/not_precedence", "{{ not s is string }}|{{ not (n > 3 and n < 5) }}|{{ s is not string or n is number }}", {}),
    # --- methods --------------------------------------------------------------
    ("method/strip", "[{{ '  x  '.strip() }}][{{ '  x  '.lstrip() }}][{{ '  x  '.rstrip() }}][{{ 'xxyxx'.strip('x') }}][{{ '\n\nhi\n'.lstrip('\n') }}][{{ 'ab\x1c'.strip() }}]", {}),
    ("method/split", "{{ 'a b  c '.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a,b,c'.split(',', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ ' a b c '.split(none, 1) }}|{{ ' a b c '.rsplit(none, 1) }}|{{ 'x</think>y</think>z'.split('</think>')[-1] }}", {}),
    ("method/affix", "{{ s.startswith('Hell') }}{{ s.endswith('World') }}{{ s.startswith(('x', 'H')) }}{{ s.endswith('o', 0, 5) }}{{ ''.startswith('') }}", {}),
    ("method/case", "{{ s.upper() }}|{{ s.lower() }}|{{ \"they're here\".title() }}|{{ 'hELLO wORLD'.capitalize() }}|{{ 'Ab'.swapcase() }}|{{ u.upper() }}", {}),
    ("method/replace", "{{ s.replace('l', 'L') }}|{{ s.replace('l', 'L', 2) }}|{{ 'ab'.replace('', '-') }}", {}),
    ("method/join_find", "{{ ', '.join(['a', 'b']) }}|{{ s.find('o') }}|{{ s.rfind('o') }}|{{ s.find('q') }}|{{ s.count('l') }}", {}),
    ("method/format", "{{ '{} and {}'.format('a', 'b') }}|{{ '{x}!'.format(x=1) }}|{{ '{0}{0}'.format('r') }}", {}),
    ("method/misc", "{{ 'a\nb\r\nc'.splitlines() }}|{{ '42'.isdigit() }}|{{ 'ab'.isalpha() }}|{{ 'x'.zfill(3) }}|{{ 'x'.ljust(3) }}|{{ 'x'.rjust(3, '*') }}|{{ 'pre_x'.removeprefix('pre_') }}|{{ 'a-b'.partition('-') }}", {}),
    ("method/dict", "{{ d.get('b') }}|{{ d.get('q') }}|{{ d.get('q', 'dflt') }}|{{ d.keys()|list }}|{{ d.values()|list|length }}|{{ d.items()|list|first }}", {}),
    ("method/list", "{{ l.index(1) }}|{{ [1, 1, 2].count(1) }}", {}),
    ("method/chained", "{{ messages[3].content.strip().split('+')[0].upper() }}", {}),
    # --- macros, call, set, with, filter ---------------------------------------
    ("macro/basic", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('a') }}|{{ greet('b', '?') }}|{{ greet(name='c', punct='.') }}", {}),
    ("macro/undefined_param", "{% macro f(a, b) %}[{{ a }}][{{ b is defined }}][{{ b is none }}]{% endmacro %}{{ f(1) }}", {}),
    ("macro/recursion", "{% macro render(v) %}{% if v is mapping %}{{ '{' }}{% for k, x in v.items() %}{{ k }}:{{ render(x) }},{% endfor %}{{ '}' }}{% elif v is iterable and v is not string %}[{% for x in v %}{{ render(x) }};{% endfor %}]{% else %}{{ v }}{% endif %}{% endmacro %}{{ render(d) }}", {}),
    ("macro/whitespace", "{% macro m() %}\n  body\n{% endmacro %}\n[{{ m() }}]", {}),
    ("macro/call_block", "{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}inner{% endcall %}", {}),
    ("macro/varargs", "{% macro v() %}{{ varargs|length }}{{ kwargs|length }}{% endmacro %}{{ v(1, 2, k=3) }}", {}),
    ("set/block", "{% set x %}a{{ 1 + 1 }}b{% endset %}{{ x }}|{{ x|length }}", {}),
    ("set/block_filter", "{% set x | upper %}abc{% endset %}{{ x }}", {}),
    ("set/ns_attr", "{% set ns = namespace(x=1) %}{% set ns.x = ns.x + 1 %}{{ ns.x }}", {}),
    ("set/non_namespace", "{% set ns = {'a': 1} %}{% set ns.a = 2 %}{{ ns.a }}", {}),
    ("set/tuple", "{% set a, b = 1, 2 %}{{ a }}{{ b }}", {}),
    ("with/basic", "{% with a = 1, b = 'x' %}{{ a }}{{ b }}{% endwith %}[{{ a }}]", {}),
    ("filter/block", "{% filter upper %}hello {{ s }}{% endfilter %}|{% filter trim|title %}  a b  {% endfilter %}", {}),
    ("generation/tag", "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.role }}{% endif %};{% endfor %}", {}),
    # --- globals ----------------------------------------------------------------
    ("global/raise", "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}", {}),
    ("global/raise_in_set", "{% set x = raise_exception('bad ' ~ n) %}", {}),
    ("global/strftime", "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d %H:%M') }}|{{ strftime_now('%B %-d, %Y') }}", {}),
    ("global/namespace_print", "{% set ns = namespace(a=1) %}{{ ns.a }}{{ ns.b is defined }}", {}),
    ("global/dict", "{{ dict(a=1)['a'] }}|{{ dict(a=1, b=2)|length }}", {}),
    ("global/range_too_big", "{{ range(200000)|length }}", {}),
    # --- realistic snippets (own templates exercising real-world patterns) -------
    ("real/alternation_check",
     "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set sys = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set sys = false %}{% endif %}"
     "{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
     "{% if loop.index0 == 0 and sys != false %}{% set content = '<<SYS>>\\n' + sys + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}"
     "{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
     {"bos_token": "<s>", "eos_token": "</s>"}),
    ("real/alternation_error",
     "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{{ message.content }}{% endfor %}",
     {}),
    ("real/header_style",
     "{{- bos_token }}\n{%- if custom_tools is defined %}\n    {%- set tools = custom_tools %}\n{%- endif %}\n{%- if not tools_in_user_message is defined %}\n    {%- set tools_in_user_message = true %}\n{%- endif %}\n"
     "{%- if not date_string is defined %}\n    {%- set date_string = strftime_now(\"%d %b %Y\") %}\n{%- endif %}\n"
     "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content']|trim %}\n    {%- set messages = messages[1:] %}\n{%- else %}\n    {%- set system_message = \"\" %}\n{%- endif %}\n"
     "{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}\n{%- if tools is not none %}\n    {{- \"Environment: ipython\\n\" }}\n{%- endif %}\n{{- \"Today Date: \" + date_string + \"\\n\\n\" }}\n"
     "{%- if tools is not none and not tools_in_user_message %}\n    {%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n        {{- \"\\n\\n\" }}\n    {%- endfor %}\n{%- endif %}\n{{- system_message }}\n{{- \"<|eot_id|>\" }}\n"
     "{%- for message in messages %}\n    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}\n        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}\n"
     "    {%- elif 'tool_calls' in message %}\n        {%- if not message.tool_calls|length == 2 %}\n            {{- raise_exception(\"This model only supports two tool calls here\") }}\n        {%- endif %}\n        {%- set tool_call = message.tool_calls[0].function %}\n"
     "        {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}\n        {{- '{\"name\": \"' + tool_call.name + '\", ' }}\n        {{- '\"parameters\": ' }}\n        {{- tool_call.arguments | tojson }}\n        {{- \"}\" }}\n        {{- \"<|eot_id|>\" }}\n"
     "    {%- elif message.role == \"tool\" or message.role == \"ipython\" %}\n        {{- \"<|start_header_id|>ipython<|end_header_id|>\\n\\n\" }}\n        {%- if message.content is mapping or message.content is iterable %}\n            {{- message.content | tojson }}\n        {%- else %}\n            {{- message.content }}\n        {%- endif %}\n        {{- \"<|eot_id|>\" }}\n    {%- endif %}\n{%- endfor %}\n"
     "{%- if add_generation_prompt %}\n    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n{%- endif %}\n",
     {"messages": CALL_MSGS, "bos_token": "<|begin_of_text|>", "tools": [TOOL], "tools_in_user_message": False, "add_generation_prompt": True}),
    ("real/think_split",
     "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}\n{%- for message in messages[::-1] %}\n    {%- set index = (messages|length - 1) - loop.index0 %}\n"
     "    {%- if ns.multi_step_tool and message.role == \"user\" and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}\n        {%- set ns.multi_step_tool = false %}\n        {%- set ns.last_query_index = index %}\n    {%- endif %}\n{%- endfor %}\n"
     "{%- for message in messages %}\n    {%- if message.role == \"assistant\" %}\n        {%- set content = message.content %}\n        {%- set reasoning_content = '' %}\n        {%- if message.reasoning_content is defined and message.reasoning_content is not none %}\n            {%- set reasoning_content = message.reasoning_content %}\n"
     "        {%- else %}\n            {%- if '</think>' in message.content %}\n                {%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}\n                {%- set reasoning_content = message.content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}\n            {%- endif %}\n        {%- endif %}\n"
     "        {%- if loop.index0 > ns.last_query_index %}\n            {{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') }}\n        {%- else %}\n            {{- '<|im_start|>' + message.role + '\\n' + content }}\n        {%- endif %}\n        {{- '<|im_end|>\\n' }}\n"
     "    {%- else %}\n        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}\n    {%- endif %}\n{%- endfor %}\n"
     "{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n    {%- if enable_thinking is defined and enable_thinking is false %}\n        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- endif %}\n{%- endif %}\n",
     {"messages": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "<think>\nadd\n</think>\n\n4"}, {"role": "user", "content": "3+3?"}, {"role": "assistant", "content": "<think>\nagain\n</think>\n6"}],
      "add_generation_prompt": True, "enable_thinking": False}),
    ("real/mistral_like",
     "{%- if messages[0][\"role\"] == \"system\" %}\n    {%- set system_message = messages[0][\"content\"] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n"
     "{%- set user_messages = loop_messages | selectattr(\"role\", \"equalto\", \"user\") | list %}\n{{- bos_token }}\n{%- for message in loop_messages %}\n    {%- if message[\"role\"] == \"user\" %}\n"
     "        {%- if tools is not none and (message == user_messages[-1]) %}\n            {{- \"[AVAILABLE_TOOLS] [\" }}\n            {%- for tool in tools %}\n                {%- set tool = tool.function %}\n                {{- '{\"type\": \"function\", \"function\": {' }}\n"
     "                {%- for key, val in tool.items() if key != \"return\" %}\n                    {%- if val is string %}\n                        {{- '\"' + key + '\": \"' + val + '\"' }}\n                    {%- else %}\n                        {{- '\"' + key + '\": ' + val|tojson }}\n                    {%- endif %}\n                    {%- if not loop.last %}\n                        {{- \", \" }}\n                    {%- endif %}\n                {%- endfor %}\n                {{- \"}}\" }}\n"
     "                {%- if not loop.last %}\n                    {{- \", \" }}\n                {%- else %}\n                    {{- \"]\" }}\n                {%- endif %}\n            {%- endfor %}\n            {{- \"[/AVAILABLE_TOOLS]\" }}\n        {%- endif %}\n"
     "        {%- if loop.last and system_message is defined %}\n            {{- \"[INST] \" + system_message + \"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}\n        {%- else %}\n            {{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}\n        {%- endif %}\n"
     "    {%- elif message[\"role\"] == \"assistant\" %}\n        {{- \" \" + message[\"content\"]|trim + eos_token}}\n    {%- else %}\n        {{- raise_exception(\"Only user and assistant roles are supported, with the exception of an initial optional system message!\") }}\n    {%- endif %}\n{%- endfor %}\n",
     {"messages": [{"role": "system", "content": "Sys"}, {"role": "user", "content": "Q"}], "tools": [TOOL], "bos_token": "<s>", "eos_token": "</s>"}),
    ("real/gemma_like",
     "{{ bos_token }}\n{%- if messages[0]['role'] == 'system' -%}\n    {%- if messages[0]['content'] is string -%}\n        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}\n    {%- else -%}\n        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}\n    {%- endif -%}\n    {%- set loop_messages = messages[1:] -%}\n"
     "{%- else -%}\n    {%- set first_user_prefix = \"\" -%}\n    {%- set loop_messages = messages -%}\n{%- endif -%}\n{%- for message in loop_messages -%}\n    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n        {{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n    {%- endif -%}\n"
     "    {%- if (message['role'] == 'assistant') -%}\n        {%- set role = \"model\" -%}\n    {%- else -%}\n        {%- set role = message['role'] -%}\n    {%- endif -%}\n    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else \"\") }}\n"
     "    {%- if message['content'] is string -%}\n        {{ message['content'] | trim }}\n    {%- elif message['content'] is iterable -%}\n        {%- for item in message['content'] -%}\n            {%- if item['type'] == 'image' -%}\n                {{ '<start_of_image>' }}\n            {%- elif item['type'] == 'text' -%}\n                {{ item['text'] | trim }}\n            {%- endif -%}\n        {%- endfor -%}\n"
     "    {%- else -%}\n        {{ raise_exception(\"Invalid content type\") }}\n    {%- endif -%}\n    {{ '<end_of_turn>\n' }}\n{%- endfor -%}\n{%- if add_generation_prompt -%}\n    {{'<start_of_turn>model\n'}}\n{%- endif -%}\n",
     {"messages": [{"role": "system", "content": "Sys"}] + PARTS + [{"role": "assistant", "content": " A "}, {"role": "user", "content": "B"}], "bos_token": "<bos>", "add_generation_prompt": True}),
    ("real/deepseek_like",
     "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% set ns = namespace(is_first=false, is_tool=false, system_prompt='', is_first_sp=true) %}"
     "{%- for message in messages %}{%- if message['role'] == 'system' %}{%- if ns.is_first_sp %}{% set ns.system_prompt = ns.system_prompt + message['content'] %}{% set ns.is_first_sp = false %}{%- else %}{% set ns.system_prompt = ns.system_prompt + '\\n\\n' + message['content'] %}{%- endif %}{%- endif %}{%- endfor %}{{ bos_token }}{{ ns.system_prompt }}"
     "{%- for message in messages %}{%- if message['role'] == 'user' %}{%- set ns.is_tool = false -%}{{'<|User|>' + message['content']}}{%- endif %}"
     "{%- if message['role'] == 'assistant' and 'tool_calls' in message %}{%- set ns.is_tool = false -%}{%- for tool in message['tool_calls'] %}{%- if not ns.is_first %}{%- if message['content'] is none %}{{'<|Assistant|><|tool_calls_begin|><|tool_call_begin|>' + tool['type'] + '<|tool_sep|>' + tool['function']['name'] + '\\n' + '```json' + '\\n' + tool['function']['arguments']|string + '\\n' + '```' + '<|tool_call_end|>'}}"
     "{%- else %}{{'<|Assistant|>' + message['content'] + '<|tool_calls_begin|>'}}{%- endif %}{%- set ns.is_first = true -%}{%- else %}{{'\\n' + '<|tool_call_begin|>' + tool['type'] + '<|tool_sep|>' + tool['function']['name'] + '\\n' + '```json' + '\\n' + tool['function']['arguments']|string + '\\n' + '```' + '<|tool_call_end|>'}}{%- endif %}{%- endfor %}{{'<|tool_calls_end|><|end_of_sentence|>'}}{%- endif %}"
     "{%- if message['role'] == 'tool' %}{%- set ns.is_tool = true -%}{{'<|tool_output_begin|>' + message['content'] + '<|tool_output_end|>'}}{%- endif %}{%- endfor -%}{% if add_generation_prompt and not ns.is_tool %}{{'<|Assistant|>'}}{% endif %}",
     {"messages": CALL_MSGS, "bos_token": "<|bos|>", "add_generation_prompt": True}),
    ("real/phi_like",
     "{% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
     {"eos_token": "<|endoftext|>"}),
    ("real/tool_schema_macro",
     "{%- macro json_to_python_type(json_spec) %}\n{%- set basic_type_map = {\n    \"string\": \"str\",\n    \"number\": \"float\",\n    \"integer\": \"int\",\n    \"boolean\": \"bool\"\n} %}\n\n"
     "{%- if basic_type_map[json_spec.type] is defined %}\n    {{- basic_type_map[json_spec.type] }}\n{%- elif json_spec.type == \"array\" %}\n    {{- \"list[\" +  json_to_python_type(json_spec|items) + \"]\"}}\n{%- elif json_spec.type == \"object\" %}\n    {{- \"dict\" }}\n{%- elif json_spec.type is iterable %}\n    {{- \"Union[\" }}\n"
     "    {%- for t in json_spec.type %}\n      {{- json_to_python_type({\"type\": t}) }}\n      {%- if not loop.last %}\n        {{- \",\" }}\n    {%- endif %}\n    {%- endfor %}\n    {{- \"]\" }}\n{%- else %}\n    {{- \"Any\" }}\n{%- endif %}\n{%- endmacro %}\n"
     "{%- for tool in tools %}\n{{- tool.function.name + '(' }}\n{%- for param_name, param_fields in tool.function.parameters.properties|items %}\n{{- param_name + \": \" + json_to_python_type(param_fields) }}\n{%- if not loop.last %}{{- \", \" }}{%- endif %}\n{%- endfor %}\n{{- ')' }}\n{%- endfor %}",
     {"tools": [TOOL, {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": ["string", "integer"]}, "b": {"type": "boolean"}, "c": {"type": "object"}}}}}]}),
    # --- more whitespace and constructs from real templates --------------------
    ("ws2/spaces_after_tag", "{% if true %}  \nx{% endif %}", {}),
    ("ws2/lstrip_after_text", "ab  {% if true %}x{% endif %}", {}),
    ("ws2/lstrip_comment", "a\n  {# c #}  \nb", {}),
    ("ws2/trim_after_var", "{{ 'a' }}\n{{ 'b' }}\n", {}),
    ("ws2/endfor_newline", "{% for x in l %}\n  {{ x }}\n{% endfor %}\nend", {}),
    ("ws2/minus_in_var_with_lstrip", "line\n    {{- 'v' }}\n", {}),
    ("ws2/raw_with_minus", "a {%- raw -%} {{ x }} {%- endraw -%} b", {}),
    ("ws2/crlf_in_literal", "{{ 'a\r\nb' }}", {}),
    ("ws2/set_lines", "{% set a = 1 %}\n{% set b = 2 %}\n{{ a + b }}\n", {}),
    ("ws2/macro_lines", "{% macro m(x) %}\n    [{{ x }}]\n{% endmacro %}\n{{ m(1) }}{{ m(2) }}", {}),
    ("more/loop_changed", "{% for x in [1, 1, 2, 2, 1] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}", {}),
    ("more/selectattr_in", "{{ messages|selectattr('role', 'in', ['system', 'assistant'])|map(attribute='role')|join(',') }}", {}),
    ("more/map_tojson", "{{ l|map('tojson')|join('|') }}|{{ TOOLS|map(attribute='function')|map(attribute='name')|list|tojson }}", {"TOOLS": [TOOL, TOOL]}),
    ("more/tojson_safe", "{{ d|tojson|safe }}", {}),
    ("more/indent_first", "{{ 'a\nb\n\nc'|indent(4, true) }}|{{ 'a\nb'|indent(width=2) }}", {}),
    ("more/length_compare", "{{ (messages|selectattr('role', 'equalto', 'system')|list|length) > 0 }}|{{ messages|length - 1 }}", {}),
    ("more/join_method_newlines", "{{ '\n\n'.join(messages|map(attribute='content')) }}", {}),
    ("more/dict_items_loop_last", "{% for k, v in d.items() %}{{ k }}{% if not loop.last %},{% endif %}{% endfor %}", {}),
    ("more/nested_data", "{{ CALL[2].tool_calls[0].function.arguments.city }}|{{ CALL[2]['tool_calls'][-1]['function']['arguments'] }}|{{ CALL[2].content is none }}|{{ CALL[3].tool_call_id }}", {"CALL": CALL_MSGS}),
    ("more/arguments_string_or_dict", "{% for tc in CALL[2].tool_calls %}{% if tc.function.arguments is string %}S:{{ tc.function.arguments }}{% else %}D:{{ tc.function.arguments|tojson }}{% endif %};{% endfor %}", {"CALL": CALL_MSGS}),
    ("more/string_compare_ops", "{{ 'abc' < 'abd' }}{{ 'b' > 'a' }}{{ 'a' <= 'a' }}{{ [1, 2] < [1, 3] }}", {}),
    ("more/concat_list_print", "{{ ['a'] + messages|map(attribute='role')|list }}", {}),
    ("more/none_compare", "{{ z is none and z == none }}|{{ none is none }}|{{ nothing is none }}", {}),
    ("more/attr_vs_item", "{{ d.items is defined }}|{{ {'items': 5}['items'] }}", {}),
    ("more/first_user", "{% set ns = namespace(first=none) %}{% for m in messages %}{% if m.role == 'user' and ns.first is none %}{% set ns.first = m.content %}{% endif %}{% endfor %}{{ ns.first }}", {}),
    ("more/int_float_ops", "{{ 3 / 1 }}|{{ 2 * 1.5 }}|{{ 7 // 2.0 }}|{{ 7 % 2.5 }}|{{ 1 + true }}|{{ 10 ** 2 }}", {}),
    ("more/str_of_bools", "{{ true ~ '' }}|{{ (1 == 1)|string }}|{{ [true, false]|join(',') }}", {}),
    ("more/loop_length_filter", "{% for m in messages if m.role != 'system' %}{{ loop.length }}{% endfor %}", {}),
    ("more/default_chain", "{{ messages[0].name|default(messages[0].role) }}|{{ (d.c.x or 'fallback') }}", {}),
    ("more/if_elif_else", "{% for x in [0, 1, 2] %}{% if x == 0 %}zero{% elif x == 1 %}one{% else %}many{% endif %};{% endfor %}", {}),
    ("more/not_in_and_or", "{{ 'q' not in 'abc' and 'a' in 'abc' }}|{{ not 'a' in 'abc' }}", {}),
    ("more/unicode_methods", "{{ 'ÉCOLE'.lower() }}|{{ 'straße'.upper() }}|{{ '  \u3000x\u3000 '.strip() }}|{{ 'ǅemal'.title() }}", {}),
    ("more/replace_newlines", "{{ 'a\nb'.replace('\n', '\\n') }}", {}),
    ("more/escape_sequences_in_data", "a\\nb {{ 'c' }}", {}),
    ("more/content_list_join", "{{ P[0].content|selectattr('type', 'equalto', 'text')|map(attribute='text')|join(' ') }}", {"P": PARTS}),
    ("more/count_filter_str", "{{ 'hello'|count }}|{{ d|count }}", {}),
    ("more/min_max_attr", "{{ [{'a': 2}, {'a': 1}]|min(attribute='a') }}|{{ ['b', 'A']|max }}", {}),
    ("more/sum_attr", "{{ [{'a': 2}, {'a': 1}]|sum(attribute='a') }}|{{ [1.5, 2]|sum }}", {}),
    ("more/groupby", "{% for g in messages|groupby('role') %}{{ g.grouper }}:{{ g.list|length }};{% endfor %}", {}),
    ("more/unique_case", "{{ ['a', 'A', 'b']|unique|list }}", {}),
    ("more/format_filter", "{{ '%s-%s'|format('a', 'b') }}|{{ '%05d'|format(42) }}", {}),
    ("more/round_methods", "{{ 2.5|round }}|{{ 3.5|round }}|{{ 2.567|round(1, 'floor') }}|{{ 2.01|round(0, 'ceil') }}", {}),
    ("more/wordwrap_missing", "{{ 'a b c'|wordwrap(3) }}", {}),
    ("more/truncate_args", "{{ 'hello world'|truncate(5, true, '..') }}", {}),
    ("more/float_format", "{{ 1/3 }}|{{ 2/3*3 }}|{{ 100.0 }}|{{ 1.5e-10 }}|{{ 12345678901234567890.0 }}", {}),
    ("more/integer_division_neg", "{{ -7 // 2 }}|{{ 7 // -2 }}|{{ -7 % -3 }}|{{ 7 % -3 }}", {}),
    ("more/bool_in_tojson", "{{ {'a': true, 'b': none, 'c': 1.0, 'd': [1, 'x']}|tojson }}", {}),
    ("more/loop_index_in_macro", "{% macro m(i) %}{{ i * 2 }}{% endmacro %}{% for x in l %}{{ m(loop.index) }}{% endfor %}", {}),
    ("more/namespace_list", "{% set ns = namespace(items=[]) %}{% for x in l %}{% set ns.items = ns.items + [x * 10] %}{% endfor %}{{ ns.items }}", {}),
    ("more/string_multiline_concat", "{{ 'a'\n   'b' }}", {}),
    ("more/is_string_none_content", "{{ CALL[2].content is string }}|{{ CALL[2].content|default('x', true) }}", {"CALL": CALL_MSGS}),
    ("more/slice_negative_step", "{{ 'abcdef'[::-2] }}|{{ l[-2:] }}|{{ l[5:] }}|{{ l[:0] }}", {}),
    ("more/capitalize_filter", "{{ 'éCOLE'|capitalize }}|{{ none|capitalize }}", {}),
    ("more/upper_none", "{{ z|upper }}|{{ n|upper }}", {}),
    ("more/reject_none", "{{ [1, none, 2]|reject('none')|list }}|{{ [1, none, 2]|select|list }}", {}),
    ("more/attr_index", "{{ l.0 }}|{{ messages.1.role }}", {}),
    # --- errors ------------------------------------------------------------------
    ("err/undefined_attr", "{{ nothing.attr }}", {}),
    ("err/plus_none", "{{ 'a' + z }}", {}),
    ("err/plus_undefined", "{{ 'a' + nothing }}", {}),
    ("err/plus_mixed", "{{ 'a' + 1 }}", {}),
    ("err/unknown_filter", "{{ s|nosuchfilter }}", {}),
    ("err/syntax", "{% if %}", {}),
    ("err/unclosed", "{% for x in l %}", {}),
    ("err/do_tag", "{% do l.append(1) %}", {}),
    ("err/list_append", "{{ l.append(4) }}", {}),
    ("err/include", "{% include 'other.jinja' %}", {}),
    ("err/division_by_zero", "{{ 1 / 0 }}", {}),
    ("err/tojson_namespace", "{{ namespace(a=1)|tojson }}", {}),
    ("err/items_on_list", "{{ l|items|list }}", {}),
]


def render(template, variables):
    ctx = {"messages": MSGS, "tools": None, "documents": None, "add_generation_prompt": False}
    ctx.update(DATA)
    ctx.update(variables)
    try:
        return {"output": env.from_string(template).render(**ctx)}
    except jinja2.exceptions.TemplateError as e:
        return {"error": type(e).__name__ + ": " + str(e)}
    except Exception as e:  # sandbox SecurityError is a TemplateRuntimeError; others: TypeError, ZeroDivisionError...
        return {"error": type(e).__name__ + ": " + str(e)}


def main():
    cases = []
    for name, template, variables in CASES:
        ctx = {"messages": MSGS}
        ctx.update(DATA)
        ctx.update(variables)
        case = {"name": name, "template": template, "vars": ctx}
        case.update(render(template, variables))
        cases.append(case)
    json.dump({"generator": "gen_jinja_cases.py", "jinja2": jinja2.__version__, "now": NOW.isoformat(), "cases": cases},
              sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
