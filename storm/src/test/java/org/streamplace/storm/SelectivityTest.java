package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

/** Tuples sent per input: fractions carry over, whole parts go out at once. */
class SelectivityTest {
    private static int[] first(double selectivity, int inputs) {
        SpecComponents.Selectivity s = new SpecComponents.Selectivity(selectivity);
        int[] out = new int[inputs];
        for (int i = 0; i < inputs; i++) {
            out[i] = s.next();
        }
        return out;
    }

    @Test
    void halfSendsEverySecondInput() {
        assertArrayEquals(new int[] {0, 1, 0, 1, 0, 1}, first(0.5, 6));
    }

    @Test
    void aboveOneSendsTheWholePartAndCarriesTheRest() {
        assertArrayEquals(new int[] {1, 2, 1, 2}, first(1.5, 4));
        assertArrayEquals(new int[] {3, 3, 3}, first(3.0, 3));
    }

    @Test
    void zeroAndSmallFractions() {
        assertArrayEquals(new int[] {0, 0, 0}, first(0.0, 3));
        assertArrayEquals(new int[] {0, 0, 0, 1, 0, 0, 0, 1}, first(0.25, 8));
    }
}
