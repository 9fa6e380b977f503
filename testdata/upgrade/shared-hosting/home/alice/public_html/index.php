<?php /* WordPress */
