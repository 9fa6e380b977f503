<?php /* WordPress front controller */
