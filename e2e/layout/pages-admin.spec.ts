// Every console page an admin may open, at desktop and phone width (testing/e2e-layout-pages.ts).
import { describePages } from '../../testing/e2e-layout-pages';

describePages('admin');
