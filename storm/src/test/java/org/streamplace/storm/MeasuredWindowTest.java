package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MeasuredWindowTest {
    @Test
    void theMeasurementIsWholeWindowsFromTheNextBoundary() {
        // now 12.345 s, 10-s windows: the next boundary is 20 s; 20 s of measurement = two windows
        assertEquals(new MeasuredWindow(20_000, 40_000), MeasuredWindow.after(12_345, 20, 10));
        // 15 s is rounded up to two whole windows; a time on a boundary starts at the next one
        assertEquals(new MeasuredWindow(20_000, 40_000), MeasuredWindow.after(10_000, 15, 10));
        assertEquals(new MeasuredWindow(3_000, 4_500), MeasuredWindow.after(2_999, 1.2, 0.5));
    }

    @Test
    void nothingMeasuredIsAnEmptyIntervalNow() {
        MeasuredWindow w = MeasuredWindow.after(12_345, 0, 10);
        assertTrue(w.isEmpty());
        assertEquals(12_345, w.startMs());
    }

    @Test
    void theLastWindowStartsOneWindowBeforeTheEnd() {
        assertEquals(30_000, new MeasuredWindow(20_000, 40_000).lastStartMs(10));
        assertEquals(4_000, new MeasuredWindow(3_000, 4_500).lastStartMs(0.5));
    }

    @Test
    void theLastWindowIsReadHalfAWindowAfterItsEndAtMostASecond() {
        assertEquals(41_000, new MeasuredWindow(20_000, 40_000).writtenMs(10));
        assertEquals(40_250, new MeasuredWindow(20_000, 40_000).writtenMs(0.5));
    }
}
