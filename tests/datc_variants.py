"""Positions beyond the DATC v3.0 cases where the `diplomacy` engine alone adjudicates wrongly: each is a case of
sections 6.D, 6.F, 6.G or 6.H with one thing changed (a convoy added, a support given by the attacked power,
an attack from the convoy's destination), and the ruling that case states for it. The adapter corrects each
(rulesets/dow/corrections.py, board.py; docs/dow.md lists the corrections); tests/test_dow_corrections.py
shows the engine alone getting each wrong and the adapter getting each right.

Same fields as tests/datc_cases.py; `retreats` are the retreat options after the first (movement) phase, and
`results` result codes the last phase must report.
"""

from __future__ import annotations

from datc_cases import Case

# 6.H.11's position: Marseilles dislodged by the army convoyed from Gascony, with a standoff in Piedmont and an
# army in Spain; only Gascony, the attacker's origin, is open (6.H.6 no contested area, 6.H.11 the origin)
_MARSEILLES = {'france': ['A GAS', 'A BUR', 'F MAO', 'F WES', 'F LYO'], 'italy': ['A MAR'],
               'germany': ['A TYR'], 'austria': ['A VEN'], 'england': ['A SPA']}
_MARSEILLES_ORDERS = {'france': ['A GAS - MAR VIA', 'A BUR S A GAS - MAR', 'F MAO C A GAS - MAR',
                                 'F WES C A GAS - MAR', 'F LYO C A GAS - MAR'],
                      'italy': ['A MAR H'], 'germany': ['A TYR - PIE'], 'austria': ['A VEN - PIE'],
                      'england': ['A SPA H']}
_MARSEILLES_AFTER = {'france': ['A BUR', 'A MAR', 'F LYO', 'F MAO', 'F WES'], 'germany': ['A TYR'],
                     'austria': ['A VEN'], 'england': ['A SPA']}

VARIANTS: list[Case] = [
    Case(id='6.H.6+convoy',
         title='Unit may not retreat to a contested area, also when dislodged by a convoyed army',
         phase='S1901M',
         units=_MARSEILLES,
         orders=[_MARSEILLES_ORDERS, {'italy': ['A MAR R PIE']}],
         after=_MARSEILLES_AFTER,
         void=['A MAR R PIE'],
         retreats={'italy': {'A MAR': ['GAS']}},
         note='the standoff in Piedmont and the army in Spain close them; the retreat to Piedmont is void and '
              'Marseilles is disbanded'),
    Case(id='6.H.11+occupied',
         title='Retreat when dislodged by adjacent convoy, the other neighbours closed',
         phase='S1901M',
         units=_MARSEILLES,
         orders=[_MARSEILLES_ORDERS, {'italy': ['A MAR R GAS']}],
         after={**_MARSEILLES_AFTER, 'italy': ['A GAS']},
         retreats={'italy': {'A MAR': ['GAS']}},
         note='the 2023 rules open the origin of the convoyed army (4.A.5): Marseilles retreats to Gascony'),
    Case(id='6.H.6+convoy-none',
         title='No retreat left after a convoyed attack',
         phase='S1901M',
         units={'france': ['A BRE', 'F ENG', 'F NTH'], 'england': ['A LON'], 'russia': ['A LVP'],
                'germany': ['F IRI'], 'turkey': ['A YOR']},
         orders=[{'france': ['A BRE - LON', 'F ENG C A BRE - LON', 'F NTH S A BRE - LON'], 'russia': ['A LVP - WAL'],
                  'germany': ['F IRI - WAL'], 'turkey': ['A YOR H']}],
         after={'france': ['A LON', 'F ENG', 'F NTH'], 'russia': ['A LVP'], 'germany': ['F IRI'], 'turkey': ['A YOR']},
         note='London, dislodged by the army convoyed from Brest, may go neither to Wales (standoff) nor to '
              'Yorkshire (occupied): it is disbanded'),
    Case(id='6.D.12+convoy',
         title='Supporting a foreign unit to dislodge own unit prohibited, also via convoy',
         phase='S1901M',
         units={'austria': ['A TRI', 'A VIE'], 'italy': ['A VEN', 'F ADR']},
         orders=[{'austria': ['A TRI H', 'A VIE S A VEN - TRI'], 'italy': ['A VEN - TRI VIA', 'F ADR C A VEN - TRI']}],
         after={'austria': ['A TRI', 'A VIE'], 'italy': ['A VEN', 'F ADR']},
         note="Austria's support does not count to dislodge its own army: the move via convoy fails"),
    Case(id='6.F.4+own-support',
         title='An attacked convoy is not disrupted, also when the attack has the convoying power\'s support',
         phase='S1901M',
         units={'england': ['F NTH', 'A LON', 'F EDI'], 'germany': ['F SKA']},
         orders=[{'england': ['F NTH C A LON - HOL', 'A LON - HOL', 'F EDI S F SKA - NTH'],
                  'germany': ['F SKA - NTH']}],
         after={'england': ['A HOL', 'F EDI', 'F NTH'], 'germany': ['F SKA']},
         note="England's support cannot dislodge its own fleet (6.D.12), so the North Sea is not dislodged and "
              "the convoy goes on"),
    Case(id='6.F.5+from-destination',
         title='A beleaguered convoy is not disrupted, also when one attacker stands in the destination',
         phase='S1901M',
         units={'england': ['F NTH', 'A LON', 'A RUH'], 'france': ['F ENG', 'F BEL'],
                'germany': ['F HOL', 'F HEL']},
         orders=[{'england': ['F NTH C A LON - HOL', 'A LON - HOL', 'A RUH S A LON - HOL'],
                  'france': ['F ENG - NTH', 'F BEL S F ENG - NTH'],
                  'germany': ['F HOL - NTH', 'F HEL S F HOL - NTH']}],
         after={'england': ['A HOL', 'A RUH', 'F NTH'], 'france': ['F BEL', 'F ENG'], 'germany': ['F HEL']},
         dislodged={'germany': ['F HOL']},
         retreats={'germany': {'F HOL': ['KIE']}},
         note='the two attacks on the North Sea stand off, the convoy goes on and the supported army dislodges '
              'Holland, whose move still stands off the French one'),
    Case(id='6.G.11+own-fleet',
         title='No land fallback for an army its own fleet convoys',
         phase='S1901M',
         units={'england': ['A NWY', 'F SKA'], 'russia': ['F NTH', 'F DEN']},
         orders=[{'england': ['A NWY - SWE', 'F SKA C A NWY - SWE'], 'russia': ['F NTH - SKA', 'F DEN S F NTH - SKA']}],
         after={'england': ['A NWY'], 'russia': ['F DEN', 'F SKA']},
         dislodged={'england': ['F SKA']},
         note='the English fleet shows the intent to convoy (6.G.1, 6.G.6); the convoy fails with its fleet and, '
              'with no fallback (6.G.8, 6.G.11), the army stays in Norway'),
    Case(id='6.F.14+cut-report',
         title='A convoyed army cuts a support given to its own convoying fleet',
         phase='S1901M',
         units={'england': ['F NTH', 'A LON'], 'germany': ['F HOL']},
         orders=[{'england': ['F NTH C A LON - HOL', 'A LON - HOL'], 'germany': ['F HOL S F NTH']}],
         after={'england': ['A LON', 'F NTH'], 'germany': ['F HOL']},
         results={'F HOL': ['cut']},
         note='nothing attacks the North Sea; the army lands its attack on Holland and cuts its support'),
    Case(id='6.H.15+coast',
         title='A fleet retreated onto a coast plays on',
         phase='S1901M',
         units={'russia': ['F BOT'], 'germany': ['F SWE', 'F BAL']},
         orders=[{'germany': ['F SWE - BOT', 'F BAL S F SWE - BOT']}, {'russia': ['F BOT R STP/SC']},
                 {'russia': ['F STP/SC - FIN']}],
         after={'russia': ['F FIN'], 'germany': ['F BAL', 'F BOT']},
         retreats={'russia': {'F BOT': ['FIN', 'LVN', 'STP/SC']}},
         note='the engine colours the province "STP/SC" after the retreat and refuses that in the next phase; '
              'the adapter keeps the colour on the province'),
]

# the 2000 rulebook keeps the land fallback (4.A.3): there the army convoyed by its own fleet moves by land
OLDER = {'6.G.11+own-fleet': {'england': ['A SWE'], 'russia': ['F DEN', 'F SKA']}}
